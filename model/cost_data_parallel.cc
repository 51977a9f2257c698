// The data-parallel gradient all-reduce (see cost_data_parallel.h).
#include "model/cost_data_parallel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "model/axo_parameters.h"
#include "model/cost_collective.h"
#include "model/cost_context.h"
#include "model/memory_model.h"

namespace axo {

namespace {

// The tied embedding's elements a rank sums with the other end of its pipeline: an x·y·z-th
// of it; axo's executor's (keeps_whole_over_z) V'/y rows of h/x, with ZeRO its data × context-th
// piece (zero_optimizer.cc finish_reduction).
double tied_embedding_elements(const CostInputs& in) {
  const ParallelConfig& c = in.config;
  if (!keeps_whole_over_z(in.machine)) return double(in.spec.vocab) * double(in.spec.hidden) / double(c.x * c.y * c.z);
  const double shards = sharded_optimizer(c) ? double(zero_shards(c)) : 1.0;
  return std::ceil(axo_vocabulary_params(in.spec, c) / shards);
}

// The tied embedding's gradient, summed by the first and the last stage in the gradients' reduce
// precision (Megatron's _allreduce_word_embedding_grads sums the main_grad buffers).
double tied_embedding_all_reduce(const CostInputs& in, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  if (c.pipeline == 1 || !in.spec.tied_embeddings) return 0;
  // The pair is the pipeline group's ends: on one node where every pipeline group is.
  const GroupPlacement pair = neighbour_pair(
      place_group(c.pipeline, c.stride(GridDim::pipeline), in.machine.gpus_per_node, c.gpus()));
  const double bytes = tied_embedding_elements(in) * reduced_gradient_bytes(in);
  const double t = collective_seconds(in.machine, CollectiveOp::all_reduce, pair, bytes);
  return record.exposed_collective(CostScope::step, CostPhase::step,
                                   "all_reduce tied embedding gradient (first and last stage)", GridDim::pipeline, 2,
                                   pair.ranks_per_node, bytes, t);
}

// PyTorch DDP's default bucket_cap_mb (torch.nn.parallel.DistributedDataParallel).
constexpr double kPytorchDdpBucketBytes = 25.0 * (1 << 20);

// The collectives an overlapped reduction of the stage's gradients runs, each
// paying the group's latency (stack.grad_buckets): one per layer, Megatron-Core's
// max(40M, 1M × data-parallel size) parameters or PyTorch DDP's 25 MiB per
// bucket; one after the backward.
double reduction_buckets(const CostInputs& in, double local_params, double layers) {
  if (in.machine.grad_reduce == GradReduce::after_backward) return 1;
  switch (in.machine.grad_buckets) {
    case GradBuckets::megatron_core: {
      const double data_parallel = double(in.config.data * in.config.context);
      return std::ceil(local_params / std::max(40e6, 1e6 * data_parallel));
    }
    case GradBuckets::pytorch_ddp:
      return std::ceil(local_params * reduced_gradient_bytes(in) / kPytorchDdpBucketBytes);
    default:
      return std::max(1.0, layers);
  }
}

// A layer's backward and recompute (and its forward too, `whole`) that the gradients' reduction may
// run under: less the attention its ring hides under (ring_windows, cost_context.h), whose share of
// a partial recompute is at most the recompute the paced layer holds.
double free_compute(const CostInputs& in, const LayerCompute& layer, bool whole) {
  const RingWindows ring = ring_windows(in, layer);
  const double backward = layer.backward + layer.recompute - ring.backward - std::min(ring.recompute, layer.recompute);
  return std::max(0.0, backward + (whole ? layer.forward - ring.forward : 0.0));
}

// Of `window` seconds of compute, the part a reduction in `buckets` runs
// under: all but the last bucket's; none where the stack reduces after the backward.
double overlap_window(const CostInputs& in, double buckets, double window) {
  if (in.machine.grad_reduce == GradReduce::after_backward) return 0;
  return window * (buckets - 1) / buckets;
}

// Of a collective of `t` seconds in `buckets` under `window` seconds of
// compute, what stays exposed: the last bucket always (it is ready only when
// the window ends); all of it where the stack reduces after the backward.
double bucketed_exposed(const CostInputs& in, double t, double buckets, double window) {
  const double all_but_last = (buckets - 1) / buckets;
  return t - hidden_seconds(in.machine, t * all_but_last, overlap_window(in, buckets, window));
}

// Collectives timed as one reduction (three at most: a stage's parts by group), each in `buckets`:
// their seconds summed, each recorded with its share of what is exposed.
struct Reduction {
  std::array<std::pair<Collective, TimedCollective>, 3> parts{};
  size_t count = 0;
  double seconds = 0;
  void add(const CostInputs& in, const Collective& c, double buckets) {
    if (c.elements <= 0) return;
    parts.at(count++) = {c, time_collective(in, c, buckets)};
    seconds += parts[count - 1].second.seconds;
  }
  // `per_iteration` times per iteration; `prefix` before each part's name ("earlier ").
  void record(const CostInputs& in, const CostRecorder& record, double exposed, double per_iteration = 1,
              const std::string& prefix = "") const {
    if (!record.recording()) return;
    for (size_t i = 0; i < count; ++i) {
      const auto& [c, timed] = parts[i];
      if (timed.seconds <= 0) continue;
      Collective named = c;
      const std::string what = prefix + c.what;
      named.what = what.c_str();
      record_collective(in, record, named, timed, exposed * timed.seconds / seconds, per_iteration);
    }
  }
};

// A collective of the fullest stage's gradients (or updated parameters) over the group of `dims`
// (with data, data × context: collective_dims), named by its first dimension larger than 1.
Collective step_collective(const ParallelConfig& config, CollectiveOp op, GridDims dims, double elements,
                           double element_bytes, const char* what) {
  GridDim named = GridDim::pipeline;
  for (int d = kGridDims - 1; d >= 0; --d) {
    if (has_dim(dims, GridDim(d)) && (config.size(GridDim(d)) > 1 || named == GridDim::pipeline)) named = GridDim(d);
  }
  Collective c{CostScope::step, CostPhase::step, op, named, elements, element_bytes, what};
  c.also = dims;
  return c;
}

// What axo's executor (keeps_whole_over_z) sums beyond data × context (shard_layout.h's
// GradientGroup): what it keeps whole over Z over z as well, the rows under sequence parallelism
// over y × z. Empty for other stacks.
struct BeyondData {
  double whole_over_z = 0, rows = 0;
};
BeyondData beyond_data(const CostInputs& in, const AxoParams& held) {
  if (!keeps_whole_over_z(in.machine)) return {};
  if (in.config.sequence_parallel && in.config.y > 1) return {held.other, held.rows};
  return {held.other + held.rows, 0};
}

// Without ZeRO: the gradient all-reduce under the last microbatch's backward; axo's executor
// all-reduces each part over its whole group (parallel_gpt.cc), the linears' over data × context.
void all_reduce_gradients(const CostInputs& in, double n, const LayerCompute& layer, const CostRecorder& record,
                          const AxoParams& held, DataParallelStep& dp) {
  using D = GridDim;
  const double e = reduced_gradient_bytes(in), buckets = reduction_buckets(in, dp.local_params, n);
  const BeyondData beyond = beyond_data(in, held);
  Reduction gradients;
  const ParallelConfig& c = in.config;
  constexpr CollectiveOp all_reduce = CollectiveOp::all_reduce;
  const double linears = dp.local_params - beyond.whole_over_z - beyond.rows;
  gradients.add(in, step_collective(c, all_reduce, grid_dims({D::data}), linears, e, "gradients"), buckets);
  gradients.add(in, step_collective(c, all_reduce, grid_dims({D::z, D::data}), beyond.whole_over_z, e,
                                    "Z-replicated gradients"),
                buckets);
  gradients.add(in, step_collective(c, all_reduce, grid_dims({D::y, D::z, D::data}), beyond.rows, e,
                                    "norm and position gradients"),
                buckets);
  if (gradients.seconds == 0) return;
  dp.all_reduce = gradients.seconds;
  const double backward = n * free_compute(in, layer, false);
  dp.window = overlap_window(in, buckets, backward);
  dp.exposed = dp.last_exposed = bucketed_exposed(in, gradients.seconds, buckets, backward);
  gradients.record(in, record, dp.exposed);
}

// Bytes per element of the updated parameters' all-gather. Kept in fp8
// (stack.fp8_weights: primary), a block's linear weights are gathered in fp8,
// 1 byte: Megatron-Core's --fp8-param-gather "keep[s] the compute param in fp8
// ... and perform[s] the param all-gather in fp8" (megatron/training/
// arguments.py), which NeMo's fp8 recipes turn on (fp8_param_gather). Norms,
// biases and the embedding or LM head move the model's element bytes.
double gathered_parameter_bytes(const CostInputs& in, double stage_layers, double local_params) {
  const double e = in.shapes.element_bytes;
  if (in.spec.precision != Precision::fp8 || in.machine.fp8_weights != Fp8Weights::primary) return e;
  const double fp8_elements = std::min(local_params, stage_layers * in.shapes.block_weights() / double(in.config.z));
  return (fp8_elements * 1.0 + (local_params - fp8_elements) * e) / local_params;
}

// ZeRO 1 and 2 (Megatron's --overlap-grad-reduce, --overlap-param-gather):
// the gradients' reduce-scatter under the backward (with zero=1 once, under
// the last microbatch's; with zero=2 after every microbatch, since no rank
// keeps the whole gradient, each earlier one hiding under the next
// microbatch's forward and backward), and the updated parameters' all-gather
// under the next iteration's first forward. Together the bytes of the
// all-reduce (REFERENCE-DATA.md, "Sharded optimizer").
void shard_over_data(const CostInputs& in, double n, const LayerCompute& layer, const CostRecorder& record,
                     const AxoParams& held, DataParallelStep& dp) {
  using D = GridDim;
  const double e = reduced_gradient_bytes(in), buckets = reduction_buckets(in, dp.local_params, n);
  // axo's executor first all-reduces what it sums beyond data over that part (zero_optimizer.cc other_part).
  const BeyondData beyond = beyond_data(in, held);
  const ParallelConfig& c = in.config;
  Reduction scatter;
  scatter.add(in, step_collective(c, CollectiveOp::all_reduce, grid_dims({D::z}), beyond.whole_over_z, e,
                                  "Z-replicated gradients"),
              buckets);
  scatter.add(in, step_collective(c, CollectiveOp::all_reduce, grid_dims({D::y, D::z}), beyond.rows, e,
                                  "norm and position gradients"),
              buckets);
  scatter.add(in, step_collective(c, CollectiveOp::reduce_scatter, grid_dims({D::data}), dp.local_params, e,
                                  "gradients"),
              buckets);
  Reduction gather;
  gather.add(in, step_collective(c, CollectiveOp::all_gather, grid_dims({D::data}), dp.local_params,
                                 gathered_parameter_bytes(in, n, dp.local_params), "updated parameters"),
             buckets);
  if (scatter.seconds == 0) return;
  dp.all_reduce = scatter.seconds;
  const double backward = n * free_compute(in, layer, false);
  dp.window = overlap_window(in, buckets, backward);
  const double last_exposed = bucketed_exposed(in, scatter.seconds, buckets, backward);
  scatter.record(in, record, last_exposed);
  dp.last_exposed = last_exposed;
  double scatter_exposed = last_exposed;
  if (in.config.zero >= 2) {
    const double earlier = double(in.spec.global_batch / (in.config.data * in.config.microbatch)) - 1;
    const double window = n * free_compute(in, layer, true);  // the next microbatch's
    const double each = scatter.seconds - hidden_seconds(in.machine, scatter.seconds, window);
    scatter_exposed += earlier * each;
    // Of each microbatch but the last.
    if (earlier > 0) scatter.record(in, record, each, earlier, "earlier ");
  }
  const double gather_exposed = bucketed_exposed(in, gather.seconds, buckets, n * layer.forward);
  dp.exposed = scatter_exposed + gather_exposed;
  gather.record(in, record, gather_exposed);
}

// The fullest stage (the first of them on a tie) and its parameters on a rank: as axo's executor
// holds them (keeps_whole_over_z), else an x·y·z-th of fullest_stage's.
struct HeldStage {
  int64_t stage = 0;
  AxoParams params;
};
HeldStage fullest_held_stage(const CostInputs& in, const std::vector<int64_t>& layers) {
  const ParallelConfig& c = in.config;
  HeldStage fullest;
  if (!keeps_whole_over_z(in.machine)) {
    const FullestStage stage = fullest_stage(in.spec, c, layers);
    fullest.stage = stage.stage;
    fullest.params.linear = double(stage.params) / double(c.x * c.y * c.z);
    return fullest;
  }
  for (size_t stage = 0; stage < layers.size(); ++stage) {
    const AxoParams held = axo_stage_params(in.spec, c, layers[stage], int64_t(stage));
    if (held.total() > fullest.params.total()) fullest = {int64_t(stage), held};
  }
  return fullest;
}

}  // namespace

DataParallelStep data_parallel_step(const CostInputs& in, const std::vector<int64_t>& layers,
                                    const LayerCompute& layer, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  DataParallelStep dp;
  // The fullest stage's gradients under its own layers' backward (the slowest stage's had been
  // the window: with uneven stages, no recompute priced slower than selective, whose longer
  // backward on another stage hid more of the first stage's reduction).
  const HeldStage fullest = fullest_held_stage(in, layers);
  dp.local_params = fullest.params.total();
  dp.updated_params = c.zero >= 1 ? dp.local_params / double(zero_shards(c)) : dp.local_params;
  const double fullest_layers = double(layers[size_t(fullest.stage)]);
  if (c.zero >= 1) shard_over_data(in, fullest_layers, layer, record, fullest.params, dp);
  else all_reduce_gradients(in, fullest_layers, layer, record, fullest.params, dp);
  dp.exposed += tied_embedding_all_reduce(in, record);
  return dp;
}

}  // namespace axo
