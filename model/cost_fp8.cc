// fp8 GEMMs, casts, amax reductions and weight copies (see cost_fp8.h).
#include "model/cost_fp8.h"

#include "model/cost_collective.h"
#include "model/gemm_model.h"

namespace axo {

namespace {

constexpr double kFp8Bytes = 1;
constexpr double kCastBytes = 2 + kFp8Bytes;                      // read bf16, write fp8
constexpr double kTransposeBytes = kFp8Bytes + kFp8Bytes;        // read fp8, write its transpose
constexpr double kCastBytesPerElement = kCastBytes + kFp8Bytes;  // cast and transpose in one kernel
constexpr double kAmaxBytes = 4;                                 // one fp32 amax per tensor
// A Z-sharded weight cast before its fp8 all-gather (Fp8Weights::gathered): FSDP2's sharded
// parameter is the fp32 master (read 4 bytes, write fp8), once per gather: the forward's and the
// backward's after resharding (cost_fsdp_copies.h), and a per-linear recompute's.
constexpr double kShardCastBytes = 4 + kFp8Bytes;
constexpr double kBlockGathers = 2;

bool fp8(const TransformerSpec& spec) { return spec.precision == Precision::fp8; }

// block_linears' order: QKV, attention out, MLP up, MLP down.
constexpr size_t kAttentionOut = 1, kMlpUp = 2;

// With stack.fp8_casts fused, the norm writes the QKV and MLP-up inputs in fp8
// and the activation the MLP-down input (each then transposed for its dW GEMM);
// only the attention output is cast on its own (machine_profile.h's Fp8Casts).
bool input_cast_fused(const CostInputs& in, size_t linear) {
  return in.machine.fp8_casts == Fp8Casts::fused && linear != kAttentionOut;
}
// With stack.fp8_casts fused, the activation's backward casts and transposes
// the MLP-up output gradient; the others are cast on their own.
bool gradient_cast_fused(const CostInputs& in, size_t linear) {
  return in.machine.fp8_casts == Fp8Casts::fused && linear == kMlpUp;
}

// One exposed all-reduce of `tensors` fp32 amaxes over `group`, recorded.
double amax_all_reduce(const CostInputs& in, const CostRecorder& record, const GroupPlacement& group, CostScope scope,
                       CostPhase phase, double tensors, const char* name) {
  const double bytes = tensors * kAmaxBytes;
  const double t = collective_seconds(in.machine, CollectiveOp::all_reduce, group, bytes);
  const GridDim dim = scope == CostScope::step ? GridDim::z : GridDim::y;  // y stands for the tensor group x·y
  return record.exposed_collective(scope, phase, name, dim, group.size, group.ranks_per_node, bytes, t);
}

// Fp8Weights::gathered: every linear weight's scale from one all-reduce of the shards' amaxes
// over Z after the optimizer step (torchao precompute_float8_dynamic_scale_for_fsdp).
double precomputed_scales(const CostInputs& in, double layers, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  if (c.z == 1 || in.machine.fp8_weights != Fp8Weights::gathered) return 0;
  const GroupPlacement shards = place_group(c.z, c.stride(GridDim::z), in.machine.gpus_per_node, c.gpus());
  const double weights = layers * double(in.shapes.linears.size());
  return amax_all_reduce(in, record, shards, CostScope::step, CostPhase::step, weights,
                         "all_reduce fp8 amax of the weight shards (precomputed scales)");
}

}  // namespace

Precision tensor_precision(Precision precision) {
  return precision == Precision::fp8 ? Precision::bf16 : precision;
}

double linear_gemm_seconds(const MachineProfile& machine, Precision precision, double m, double n, double k) {
  if (precision != Precision::fp8) return gemm_seconds(machine, precision, m, n, k);
  const double scale = gemm_roofline_seconds(machine, Precision::fp8, m, n, k) /
                       gemm_roofline_seconds(machine, Precision::bf16, m, n, k);
  return gemm_seconds(machine, Precision::bf16, m, n, k) * scale;
}

namespace {

// Whether the profile has a rate for `precision`: a rate at the schema's floor is a calibration's
// placeholder for a precision it did not measure.
bool has_rate(const MachineProfile& machine, Precision precision) {
  return machine.peak_tflops(precision) > kUnmeasuredTflops;
}

// fp8 runs its attention core and memory-bound ops in bf16: it needs both rates.
bool prices(Precision precision, const MachineProfile& machine) {
  return has_rate(machine, precision) && has_rate(machine, tensor_precision(precision));
}

}  // namespace

std::string precision_problem(Precision precision, const MachineProfile& machine, const std::string& profile_path) {
  if (std::string why = unmeasured_rates_problem(machine, profile_path.empty() ? "machine '" + machine.name + "'" : profile_path);
      !why.empty()) {
    return why;
  }
  for (Precision needed : {precision, tensor_precision(precision)}) {
    if (has_rate(machine, needed)) continue;
    const std::string name = to_string(needed);
    std::string rates;  // the precisions it can price, fp32 always
    for (Precision p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::fp8}) {
      if (prices(p, machine)) rates += std::string(rates.empty() ? "" : ", ") + to_string(p);
    }
    return std::string("precision ") + to_string(precision) + ": machine '" + machine.name + "' has no " + name +
           " rate (peak_tflops." + name + " in its profile" + (profile_path.empty() ? "" : " " + profile_path) +
           "); it prices " + rates;
  }
  return "";
}

double sequence_parallel_gather_bytes(const CostInputs& in) {
  return fp8(in.spec) ? kFp8Bytes : activation_comm_bytes(in);
}

Fp8LayerCost fp8_layer_casts(const CostInputs& in, const CostRecorder& record) {
  if (!fp8(in.spec)) return {};
  const bool sp = in.config.sequence_parallel;
  const double y = double(in.config.y);
  // A tensor gathered over Y: cast on the local m/y rows, transposed once gathered.
  const double local_cast = kCastBytes / y;
  double forward = 0, backward = 0, forward_kernels = 0, backward_kernels = 0;
  for (size_t i = 0; i < in.shapes.linears.size(); ++i) {
    const LocalLinear& l = in.shapes.linears[i];
    const double inputs = l.m * l.k, gradients = l.m * l.n;
    const bool input_fused = input_cast_fused(in, i);
    if (sp && !l.full.transposed) {  // cast on the local rows unless its producer wrote fp8, transposed once gathered
      if (!input_fused) forward += inputs * local_cast, forward_kernels += 1;
      backward += inputs * kTransposeBytes, backward_kernels += 1;
    } else if (input_fused) {  // written in fp8 by its producer, transposed for dW (Transformer Engine's fp8_transpose)
      backward += inputs * kTransposeBytes, backward_kernels += 1;
    } else {
      forward += inputs * kCastBytesPerElement, forward_kernels += 1;
    }
    if (sp && l.full.transposed) {
      backward += gradients * (local_cast + kTransposeBytes), backward_kernels += 2;
    } else if (!gradient_cast_fused(in, i)) {
      backward += gradients * kCastBytesPerElement, backward_kernels += 1;
    }
  }
  Fp8LayerCost cost;
  cost.forward = record.memory(CostScope::layer, CostPhase::forward, "fp8 casts of the 4 linear inputs", forward,
                               memory_op_seconds(in.machine, forward, forward_kernels));
  cost.backward = record.memory(CostScope::layer, CostPhase::backward,
                                sp ? "fp8 casts of the 4 output gradients, transposes of the gathered inputs"
                                   : "fp8 casts of the 4 output gradients",
                                backward, memory_op_seconds(in.machine, backward, backward_kernels));
  return cost;
}

Fp8LayerCost fp8_amax_reductions(const CostInputs& in, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  if (!fp8(in.spec) || in.machine.fp8_amax != Fp8Amax::tensor || c.x * c.y == 1) return {};
  const int64_t n = in.machine.gpus_per_node;
  const GroupPlacement tensor = grid_group(c, grid_dims({GridDim::x, GridDim::y}), n);
  return {amax_all_reduce(in, record, tensor, CostScope::layer, CostPhase::forward, 8,
                          "all_reduce fp8 amax of X and W (tensor group x*y)"),
          amax_all_reduce(in, record, tensor, CostScope::layer, CostPhase::backward, 4,
                          "all_reduce fp8 amax of dY (tensor group x*y)")};
}

bool prices_stage_group(const TransformerSpec& spec, const MachineProfile& machine) {
  return fp8(spec) && machine.fp8_amax == Fp8Amax::stage;
}

double fp8_stage_amax(const CostInputs& in, double microbatches, double stage_layers, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  if (!prices_stage_group(in.spec, in.machine)) return 0;
  const GroupPlacement stage = stage_group(c, in.machine.gpus_per_node);
  if (stage.size == 1) return 0;
  const double regions = microbatches * double(c.interleave);  // a model chunk's forward or backward
  const double chunk_layers = stage_layers / double(c.interleave);
  struct Reduction {
    CostPhase phase;
    double tensors;  // fp32 amaxes a layer adds
    const char* name;
  };
  double total = 0;
  for (const Reduction& r : {Reduction{CostPhase::forward, 8, "all_reduce fp8 amaxes of a chunk's X and W"},
                             Reduction{CostPhase::backward, 4, "all_reduce fp8 amaxes of a chunk's dY"}}) {
    const double bytes = chunk_layers * r.tensors * kAmaxBytes;
    const double t = collective_seconds(in.machine, CollectiveOp::all_reduce, stage, bytes);
    if (record.recording()) {
      CostItem item;
      item.scope = CostScope::step, item.phase = r.phase, item.kind = CostKind::collective;
      item.name = std::string(r.name) + " (the stage's ranks: x*y*z*context*data)";
      item.group = GridDim::data;  // stands for every rank of the stage
      item.group_size = stage.size;
      item.ranks_per_node = stage.ranks_per_node;
      item.bytes = bytes;
      item.seconds = item.exposed = t;
      item.per_iteration = regions;
      record.add(std::move(item));
    }
    total += regions * t;
  }
  return total;
}

double gathered_weight_bytes(Precision precision, Fp8Weights held) {
  const bool fp8_gather = precision == Precision::fp8 && (held == Fp8Weights::gathered || held == Fp8Weights::primary);
  return fp8_gather ? kFp8Bytes : bytes_per_element(precision);
}

Fp8WeightCost fp8_weight_costs(const CostInputs& in, const Fp8WeightLayers& layers, double microbatches,
                               const CostRecorder& record) {
  if (!fp8(in.spec)) return {};
  const ParallelConfig& c = in.config;
  const Fp8Weights held = in.machine.fp8_weights;
  const bool every_microbatch = c.z > 1 || held == Fp8Weights::transient || held == Fp8Weights::gathered;
  const double runs = every_microbatch ? microbatches : 1;
  // Z gathers fp8: backward transposes the gathered weight (2 bytes), and a `gathered` stack casts
  // the shard of each gather: two a layer, a third for a per-linear gather's recomputed forward.
  double bytes = layers.stage * kCastBytesPerElement, kernels = 4 * layers.stage;
  if (c.z > 1 && gathered_weight_bytes(in) == kFp8Bytes) {
    bytes = layers.stage * kTransposeBytes;
    if (held == Fp8Weights::gathered) {
      const bool again = in.machine.weight_gather == WeightGather::per_linear && c.recompute == Recompute::full;
      const double gathers = kBlockGathers * layers.stage + (again ? layers.recomputed : 0);
      bytes += gathers * kShardCastBytes / double(c.z), kernels += 4 * gathers;
    }
  }
  bytes *= runs * in.shapes.block_weights(), kernels *= runs;
  Fp8WeightCost cost;
  cost.casts = record.memory(CostScope::step, CostPhase::forward,
                             every_microbatch ? "fp8 casts of the stage's linear weights (every microbatch)"
                                              : "fp8 casts of the stage's linear weights (first microbatch)",
                             bytes, memory_op_seconds(in.machine, bytes, kernels));
  cost.scales = precomputed_scales(in, layers.stage, record);
  return cost;
}

double fp8_layer_copy_bytes(const TransformerSpec& spec, const ParallelConfig& config, Fp8Weights held) {
  if (!fp8(spec)) return 0;
  const bool of_gathered = config.z > 1 && (held == Fp8Weights::transient || held == Fp8Weights::gathered);
  const double shards = double(config.x * config.y * (of_gathered ? 1 : config.z));
  const double bytes = held == Fp8Weights::gathered && config.z > 1 ? kFp8Bytes : 2 * kFp8Bytes;
  return double(spec.linear_weights_per_layer()) / shards * bytes;
}

}  // namespace axo
