// The 4D cost model: its steps in order (see cost_model.h for the formulas),
// the divisibility check and the memo of per-microbatch compute.
#include "model/cost_model.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "model/config_fields.h"
#include "model/cost_collective.h"
#include "model/cost_context.h"
#include "model/cost_data_parallel.h"
#include "model/cost_fp8.h"
#include "model/cost_optimizer.h"
#include "model/cost_pipeline.h"
#include "model/cost_split.h"
#include "model/cost_stage_ends.h"
#include "model/error.h"
#include "model/memory_model.h"

namespace axo {

namespace {

// What one rank computes per microbatch: it depends only on the local shapes.
struct LocalCompute {
  LocalShapes shapes;
  LayerCompute layer;
  StageEndCompute ends;
  // context > 1: the ring attention's exposed time per layer on its fastest
  // placement (context innermost: the most ranks per node), which no rank
  // order beats (compute_lower_bound).
  double fastest_ring = 0;
};

// fp8's casts are memory-bound work of the layer: forward, backward (a
// window for the backward's collectives as the rest of it is), and the
// forward's again under full recompute.
void add_fp8_casts(const Fp8LayerCost& casts, Recompute recompute, const CostRecorder& record, LayerCompute& layer) {
  layer.forward += casts.forward;
  layer.backward += casts.backward;
  layer.backward_window += casts.backward;
  if (recompute != Recompute::full || casts.forward == 0) return;
  const double again =
      record.memory(CostScope::layer, CostPhase::recompute, "fp8 casts of the linear inputs again", 0, casts.forward);
  layer.recompute += again, layer.backward_window += again;
}

LocalCompute local_compute(const TransformerSpec& spec, const MachineProfile& machine, const ParallelConfig& c,
                           const CostRecorder& record) {
  LocalCompute local;
  local.shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, local.shapes};
  local.layer = layer_compute(in, record);
  add_fp8_casts(fp8_layer_casts(in, record), c.recompute, record, local.layer);
  local.ends = stage_end_compute(in, record);
  if (c.context > 1 && !record.recording()) {
    ParallelConfig fastest = c;
    const auto context = std::find(fastest.order.begin(), fastest.order.end(), GridDim::context);
    std::rotate(fastest.order.begin(), context, context + 1);
    const RingAttention ring = ring_attention({spec, machine, fastest, local.shapes}, local.layer, CostRecorder());
    local.fastest_ring = ring.forward + ring.recompute + ring.backward;
  }
  return local;
}

struct ComputeKey {
  int64_t x, y, z, context, microbatch;
  int64_t gpus;  // where the node boundaries fall for the fastest ring (place_group)
  Recompute recompute;
  bool sequence_parallel;
  bool embedding_apart;    // embedding_apart_from_head (cost_stage_ends.h)
  bool sharded_gradients;  // sharded_gradients (memory_model.h): FSDP's copies before the reduce
  bool operator==(const ComputeKey&) const = default;
};

ComputeKey compute_key(const TransformerSpec& spec, const ParallelConfig& c) {
  return {c.x, c.y, c.z, c.context, c.microbatch, c.gpus(), c.recompute, c.sequence_parallel,
          embedding_apart_from_head(spec, c), sharded_gradients(c)};
}

struct ComputeKeyHash {
  size_t operator()(const ComputeKey& k) const {
    size_t h = std::hash<int64_t>()(k.x);
    for (int64_t v : {k.y, k.z, k.context, k.microbatch, k.gpus, int64_t(k.recompute), int64_t(k.sequence_parallel),
                      int64_t(k.embedding_apart), int64_t(k.sharded_gradients)}) {
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    }
    return h;
  }
};

// What one rank communicates per microbatch inside its tensor-parallel and
// context groups: it depends on the local shapes and where those groups sit.
struct LocalComm {
  LayerComm layer;  // fp8's amax all-reduces included
  StageEndComm ends;
};

LocalComm local_comm(const CostInputs& in, const LayerCompute& layer, const CostRecorder& record) {
  LocalComm comm{layer_comm(in, layer, record), stage_end_comm(in, record)};
  const Fp8LayerCost amax = fp8_amax_reductions(in, record);
  comm.layer.forward += amax.forward, comm.layer.backward += amax.backward;
  return comm;
}

struct CommKey {
  ComputeKey compute;
  bool overlap;
  std::array<int64_t, 4> capped_strides;  // of the x, y, z and context groups: min(stride, gpus per node)
  int64_t x_y_ranks_per_node;             // of the x × y group (fp8's amax), which also reads their adjacency
  bool operator==(const CommKey&) const = default;
};

struct CommKeyHash {
  size_t operator()(const CommKey& k) const {
    size_t h = ComputeKeyHash()(k.compute) * 1000003u ^ size_t(k.overlap);
    for (int64_t v : k.capped_strides) h = h * 1000003u ^ std::hash<int64_t>()(v);
    h = h * 1000003u ^ std::hash<int64_t>()(k.x_y_ranks_per_node);
    return h;
  }
};

// The totals, the rates and the memory, once the components are known.
void finish(const TransformerSpec& s, const MachineProfile& machine, const ParallelConfig& c,
            const std::vector<int64_t>& stage_layers, const MemoryBreakdown* memory, Breakdown& b) {
  b.iter_time = b.compute + b.tp_comm + b.bubble + b.pp_comm + b.dp_comm + b.offload + b.optimizer;
  b.tflops_per_gpu = s.model_flops_per_iteration() / double(c.gpus()) / b.iter_time / 1e12;
  b.pct_peak = 100.0 * b.tflops_per_gpu / machine.peak_tflops(s.precision);
  b.memory = memory ? *memory : memory_per_device(s, c, stage_layers, memory_stack(machine));
  b.memory_capacity = machine.usable_memory_bytes();
  b.fits = b.memory.total() <= b.memory_capacity;
}

}  // namespace

// A table of values computed once per key, shared by the threads that use
// one CostModel. The table is guarded by a mutex; each thread also keeps the
// entry it used last (the search costs many configurations with the same key
// in a row), so most look-ups take no lock. Entries are never removed, and an
// unordered_map never moves its elements: a returned reference stays valid as
// long as the memo.
template <class Key, class Value, class Hash>
class SharedMemo {
 public:
  template <class Compute>
  const Value& get(const Key& key, Compute&& compute) {
    thread_local LastUsed last;
    if (last.memo == id_ && last.key == key) return *last.value;
    const Value& value = shared(key, compute);
    last = {id_, key, &value};
    return value;
  }

 private:
  struct LastUsed {
    uint64_t memo = 0;  // the id_ of the memo it came from; 0: none
    Key key{};
    const Value* value = nullptr;
  };

  template <class Compute>
  const Value& shared(const Key& key, Compute& compute) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (auto found = computed_.find(key); found != computed_.end()) return found->second;
    }
    Value value = compute();
    const std::lock_guard<std::mutex> lock(mutex_);
    return computed_.emplace(key, std::move(value)).first->second;
  }

  static uint64_t next_id() {
    static std::atomic<uint64_t> count{0};
    return ++count;
  }

  const uint64_t id_ = next_id();  // unique per memo, never reused
  std::mutex mutex_;
  std::unordered_map<Key, Value, Hash> computed_;
};

// Per-microbatch compute by local shape, and the tensor-parallel and ring
// communication by local shape and where the x, y, z and context groups sit
// (their ranks per node: all that collective times read of the rank order).
// GridDim's order is x, y, z, context, data, pipeline.
class CostModel::ComputeMemo {
 public:
  const LocalCompute& get(const TransformerSpec& spec, const MachineProfile& machine, const ParallelConfig& c) {
    return compute_.get(compute_key(spec, c), [&] { return local_compute(spec, machine, c, CostRecorder()); });
  }
  const LocalComm& comm(const TransformerSpec& spec, const MachineProfile& machine, const ParallelConfig& c,
                        const LocalCompute& local) {
    // A group's ranks per node follow from its size and the GPUs (in the key)
    // and its stride up to a node (place_group): the capped strides stand for
    // them; the x × y group's also from whether x and y are adjacent.
    const int64_t n = machine.gpus_per_node;
    const std::array<int64_t, kGridDims> sizes = {c.x, c.y, c.z, c.context, c.data, c.pipeline};  // by GridDim
    std::array<int64_t, kGridDims> capped{};
    int64_t next = 1;
    for (GridDim d : c.order) capped[size_t(d)] = std::min(next, n), next *= sizes[size_t(d)];
    const CommKey key{compute_key(spec, c),
                      c.overlap,
                      {capped[0], capped[1], capped[2], capped[3]},
                      grid_group(c, grid_dims({GridDim::x, GridDim::y}), n).ranks_per_node};
    return comm_.get(key, [&] { return local_comm({spec, machine, c, local.shapes}, local.layer, CostRecorder()); });
  }

 private:
  SharedMemo<ComputeKey, LocalCompute, ComputeKeyHash> compute_;
  SharedMemo<CommKey, LocalComm, CommKeyHash> comm_;
};

CostModel::CostModel(TransformerSpec spec, MachineProfile machine)
    : spec_(std::move(spec)), machine_(std::move(machine)), memo_(std::make_shared<ComputeMemo>()) {}

int64_t CostModel::microbatches(const ParallelConfig& c) const {
  return spec_.global_batch / (c.data * c.microbatch);
}

const PipelineSplit& CostModel::pipeline_split(const ParallelConfig& c) const {
  return remembered_split(spec_, c.pipeline, c.interleave).split;
}

// A priced configuration and the layers of its slowest stage (and of them, those that recompute).
struct CostModel::Priced {
  Breakdown breakdown;
  double paced_layers = 0, paced_recomputed = 0;
};

namespace {

// The configuration whose layers cost what partial recompute's kept layers cost.
ParallelConfig without_recompute(ParallelConfig c) {
  c.recompute = Recompute::none, c.recompute_layers = 0;
  return c;
}

// The lesser of `cost` on the configurations whose layer costs `c`'s layers take: its own, and under
// partial recompute the kept layers' (they save the recompute but have a shorter backward to hide
// collectives under, so either may be the cheaper): what the lower bounds may assume of every layer.
template <class Cost>
double cheapest_layer(const ParallelConfig& c, Cost&& cost) {
  const double own = cost(c);
  return partial_recompute(c) ? std::min(own, cost(without_recompute(c))) : own;
}

// A layer's backward with its recompute and their exposed collectives.
double layer_backward(const LayerCompute& layer, const LayerComm& comm) {
  return layer.backward + layer.recompute + comm.recompute + comm.backward;
}

}  // namespace

CostModel::Priced CostModel::price(const ParallelConfig& c, const CostRecorder& record,
                                   const MemoryBreakdown* memory) const {
  const double m = double(microbatches(c));
  const std::vector<int64_t>& layers = remembered_split(spec_, c.pipeline, c.interleave).stage_layers;
  // Recording computes afresh, so that every item is listed; otherwise the memo answers.
  const LocalCompute fresh = record.recording() ? local_compute(spec_, machine_, c, record) : LocalCompute{};
  const LocalCompute& local = record.recording() ? fresh : memo_->get(spec_, machine_, c);
  const CostInputs in{spec_, machine_, c, local.shapes};
  const LocalComm fresh_comm = record.recording() ? local_comm(in, local.layer, record) : LocalComm{};
  const LocalComm& comm = record.recording() ? fresh_comm : memo_->comm(spec_, machine_, c, local);
  StageParts parts{local.layer, comm.layer, local.ends, comm.ends};
  if (partial_recompute(c)) {  // the kept layers cost as without recompute
    const ParallelConfig kept = without_recompute(c);
    const LocalCompute& kept_local = memo_->get(spec_, machine_, kept);
    parts.kept = &kept_local.layer;
    parts.kept_comm = &memo_->comm(spec_, machine_, kept, kept_local).layer;
    const PipelineSplit& split = pipeline_split(c);
    for (int64_t s = 0; s < c.pipeline; ++s) parts.recomputed.push_back(recomputed_layers(c, split, s));
  }
  const StageTime stage = slowest_stage(layers, parts);
  // The slowest stage's layer on average: the recompute of the layers that recompute, over all.
  const double recomputed_share = stage.recomputed / stage.layers;
  LayerCompute paced = local.layer;
  paced.recompute *= recomputed_share;
  Breakdown b;
  const Fp8WeightCost weights = fp8_weight_costs(in, {stage.layers, stage.recomputed}, m, record);
  b.compute = m * stage.compute + weights.casts;
  b.tp_comm = m * stage.tp_comm + weights.scales + fp8_stage_amax(in, m, stage.layers, record);
  b.bubble = pipeline_bubble(c, stage);
  b.pp_comm = pipeline_p2p(in, m, record);
  const DataParallelStep dp = data_parallel_step(in, layers, paced, record);
  b.dp_comm = dp.exposed;
  const OptimizerStep step = optimizer_step(in, dp, record);
  b.offload = step.offload;
  b.optimizer = step.optimizer;
  b.layer_forward = local.layer.forward + comm.layer.forward;
  b.layer_backward = recomputed_share * layer_backward(local.layer, comm.layer);
  if (parts.kept) b.layer_backward += (1 - recomputed_share) * layer_backward(*parts.kept, *parts.kept_comm);
  finish(spec_, machine_, c, layers, memory, b);
  return {b, stage.layers, stage.recomputed};
}

Breakdown CostModel::evaluate(const ParallelConfig& config) const { return price(config, CostRecorder()).breakdown; }

Breakdown CostModel::evaluate(const ParallelConfig& config, const MemoryBreakdown& memory) const {
  return price(config, CostRecorder(), &memory).breakdown;
}

double CostModel::paced_lower_bound(const ParallelConfig& c) const {
  const double per_layer = cheapest_layer(c, [&](const ParallelConfig& variant) {
    const LocalCompute& local = memo_->get(spec_, machine_, variant);
    return local.layer.total() + memo_->comm(spec_, machine_, variant, local).layer.total();
  });
  const std::vector<int64_t>& layers = remembered_split(spec_, c.pipeline, c.interleave).stage_layers;
  const double m = double(microbatches(c));
  const double per_microbatch = double(*std::max_element(layers.begin(), layers.end())) * per_layer;
  return (m + double(c.pipeline - 1) / double(c.interleave)) * per_microbatch;
}

Breakdown CostModel::explain(const ParallelConfig& config, std::vector<CostItem>& items) const {
  items.clear();
  // Layer items count their runs on the slowest stage, which a silent pricing finds first.
  const double m = double(microbatches(config));
  const Priced silent = price(config, CostRecorder());
  return price(config, CostRecorder(&items, silent.paced_layers * m, m, silent.paced_recomputed * m)).breakdown;
}

double CostModel::compute_lower_bound(const ParallelConfig& c) const {
  const double per_layer = cheapest_layer(c, [&](const ParallelConfig& variant) {
    const LocalCompute& local = memo_->get(spec_, machine_, variant);
    return local.layer.total() + local.fastest_ring;
  });
  const std::vector<int64_t>& layers = remembered_split(spec_, c.pipeline, c.interleave).stage_layers;
  return double(microbatches(c)) * double(*std::max_element(layers.begin(), layers.end())) * per_layer;
}

std::string CostModel::pricing_problem(const ParallelConfig& config) const {
  const std::string precision = precision_problem(spec_.precision, machine_);
  return precision.empty() ? check(config) : precision;
}

std::string CostModel::check(const ParallelConfig& c) const {
  try {
    pipeline_split(c);
  } catch (const InputError& e) {
    return e.what();
  }
  auto divides = [](const char* a, int64_t av, const char* b, int64_t bv) -> std::string {
    if (bv % av == 0) return "";
    return std::string(a) + "=" + std::to_string(av) + " does not divide " + b + "=" + std::to_string(bv);
  };
  for (const std::string& problem :
       {divides("data*microbatch", c.data * c.microbatch, "global_batch", spec_.global_batch),
        divides("z", c.z, "microbatch", c.microbatch), divides("y", c.y, "heads", spec_.heads),
        divides("y", c.y, "kv_heads", spec_.kv_heads), divides("x", c.x, "hidden", spec_.hidden),
        divides("y", c.y, "hidden", spec_.hidden), divides("y", c.y, "ffn_hidden", spec_.ffn_hidden)}) {
    if (!problem.empty()) return problem;
  }
  for (const Linear& l : block_linears(spec_)) {
    const int64_t out_split = l.transposed ? c.x : c.y;
    if (l.out % out_split != 0) {
      return std::string(l.transposed ? "x=" : "y=") + std::to_string(out_split) + " does not divide the " + l.name +
             " width " + std::to_string(l.out);
    }
    const int64_t block = (l.out / out_split) * (l.in / (l.transposed ? c.y : c.x));
    if (block % c.z != 0) {
      return "z=" + std::to_string(c.z) + " does not divide the " + l.name + " weight block of " +
             std::to_string(block) + " elements";
    }
  }
  if (const std::string problem = context_problem(c.context, spec_.seq_len); !problem.empty()) return problem;
  return check_schedule(c);
}

std::string CostModel::check_schedule(const ParallelConfig& c) const {
  if (const std::string problem = sequence_parallel_problem(c); !problem.empty()) return problem;
  if (const std::string problem = sequence_split_problem(c, spec_.seq_len); !problem.empty()) return problem;
  if (const std::string problem = recompute_problem(c.recompute, c.recompute_layers); !problem.empty()) return problem;
  if (partial_recompute(c)) {
    if (const std::string problem = recompute_layers_problem(pipeline_split(c), c.recompute_layers); !problem.empty()) {
      return problem;
    }
  }
  return interleave_problem(c);
}

std::string CostModel::interleave_problem(const ParallelConfig& c) const {
  if (c.interleave > 1 && c.pipeline == 1) return "interleave=" + std::to_string(c.interleave) + " needs pipeline>1";
  if (c.interleave > 1 && microbatches(c) % c.pipeline != 0) {
    return "pipeline=" + std::to_string(c.pipeline) + " does not divide the " + std::to_string(microbatches(c)) +
           " microbatches (global_batch=" + std::to_string(spec_.global_batch) + " / (data=" + std::to_string(c.data) +
           " * microbatch=" + std::to_string(c.microbatch) + ")) of the interleaved schedule";
  }
  return "";
}

std::string CostModel::check_held(const FixedFields& fixed, int64_t gpus) const {
  ParallelConfig c = fixed.values;  // the rest at their defaults
  // The search gives a held recompute_layers full recompute unless recompute is held too.
  if (!fixed.holds("recompute") && c.recompute_layers > 0) c.recompute = Recompute::full;
  if (const std::string problem = recompute_problem(c.recompute, c.recompute_layers); !problem.empty()) return problem;
  if (fixed.holds("sequence_parallel")) {
    ParallelConfig probe = c;
    if (!fixed.holds("y")) probe.y = 2;  // any y > 1 (x, free, is 1)
    if (const std::string problem = sequence_parallel_problem(probe); !problem.empty()) return problem;
    // A free context is 1 here: Y dividing no seq_len divides no seq_len / context either.
    if (fixed.holds("y")) {
      if (const std::string problem = sequence_split_problem(probe, spec_.seq_len); !problem.empty()) return problem;
    }
  }
  if (fixed.holds("data") || fixed.holds("microbatch")) {
    const std::string name = !fixed.holds("microbatch") ? "data"
                             : !fixed.holds("data")     ? "microbatch"
                                                        : "data*microbatch";
    if (spec_.global_batch % (c.data * c.microbatch) != 0) {
      return name + "=" + std::to_string(c.data * c.microbatch) + " does not divide global_batch=" +
             std::to_string(spec_.global_batch);
    }
  }
  if (fixed.holds("z") && fixed.holds("microbatch") && c.microbatch % c.z != 0) {
    return "z=" + std::to_string(c.z) + " does not divide microbatch=" + std::to_string(c.microbatch);
  }
  if (const std::string problem = check_held_chunks(fixed, c, gpus); !problem.empty()) return problem;
  if (const std::string problem = check_held_settings(fixed, c, gpus); !problem.empty()) return problem;
  // A whole grid held: the model's own check, the free settings at their defaults (a free
  // microbatch at z, the smallest Z splits).
  if (!fixed.holds("microbatch")) c.microbatch = c.z;
  return fixed.all_grid_fixed() ? check(c) : "";
}

namespace {

// The product of `inside`'s grid fields that the held values leave no choice on: held
// themselves; the held ones alone when the held grid fields take every GPU (the free ones are
// 1); or the GPUs over the held `outside` fields (the rest of the grid). 0 when it is free.
int64_t forced_product(const FixedFields& fixed, const ParallelConfig& c, int64_t gpus,
                       std::initializer_list<const char*> inside, std::initializer_list<const char*> outside) {
  const auto part = [&](std::initializer_list<const char*> names, bool& all_held) {
    int64_t product = 1;
    all_held = true;
    for (const char* name : names) {
      const bool held = fixed.holds(name);
      all_held = all_held && held;
      if (held) product *= config_field(name).get(c);
    }
    return product;
  };
  bool inside_held = false, outside_held = false;
  const int64_t in = part(inside, inside_held), out = part(outside, outside_held);
  if (inside_held || (gpus > 0 && in * out == gpus)) return in;
  return gpus > 0 && outside_held && gpus % out == 0 ? gpus / out : 0;
}

}  // namespace

// check_held's rules of the settings the search tries only where they change something
// (config_fields.cc: zero where data·context > 1, overlap where x·y·z > 1).
std::string CostModel::check_held_settings(const FixedFields& fixed, const ParallelConfig& c, int64_t gpus) {
  if (fixed.holds("zero") && c.zero > 0 &&
      forced_product(fixed, c, gpus, {"data", "context"}, {"pipeline", "x", "y", "z"}) == 1) {
    return "zero=" + std::to_string(c.zero) + " shards over data × context, which is 1 here: hold data*context > 1 "
           "or zero=0";
  }
  if (fixed.holds("overlap") && !c.overlap &&
      forced_product(fixed, c, gpus, {"x", "y", "z"}, {"pipeline", "data", "context"}) == 1) {
    return "overlap=off has nothing to hold back without tensor parallelism (x*y*z = 1 here): only x*y*z > 1 "
           "searches it";
  }
  return "";
}

// With data or microbatch free, the interleaved schedule's rule on every microbatch count they
// allow: global_batch / (data · microbatch) divides the held part's quotient, so the pipeline (held)
// must divide that quotient, or (free) some pipeline > 1 that divides the GPUs must.
std::string CostModel::interleave_count_problem(const FixedFields& fixed, const ParallelConfig& c, int64_t gpus) const {
  // All three held: interleave_problem's case.
  if (fixed.holds("data") && fixed.holds("microbatch") && fixed.holds("pipeline")) return "";
  const int64_t per_step = (fixed.holds("data") ? c.data : 1) * (fixed.holds("microbatch") ? c.microbatch : 1);
  if (spec_.global_batch % per_step != 0) return "";  // the batch rule's case
  const int64_t most = spec_.global_batch / per_step;  // the most microbatches the held values allow
  std::string held_text = "global_batch=" + std::to_string(spec_.global_batch);
  if (fixed.holds("data")) held_text += ", data=" + std::to_string(c.data);
  if (fixed.holds("microbatch")) held_text += ", microbatch=" + std::to_string(c.microbatch);
  const std::string rule = "the interleaved schedule needs the pipeline to divide its microbatches, "
                           "global_batch / (data * microbatch): with " + held_text + " there are at most " +
                           std::to_string(most);
  if (fixed.holds("pipeline") && c.pipeline > 1 && most % c.pipeline != 0) {
    return rule + ", and pipeline=" + std::to_string(c.pipeline) + " divides no count of them";
  }
  if (!fixed.holds("pipeline") && std::gcd(most, gpus) < 2) {
    return rule + (most < 2 ? ", which no pipeline > 1 divides"
                            : ", and no pipeline > 1 that divides the " + std::to_string(gpus) + " GPUs divides " +
                                  std::to_string(most));
  }
  return "";
}

// check_held's pipeline rules: chunks of a layer or more, interleaving's stages and microbatches,
// and a recompute_layers that some chunk holds (free pipeline and interleave: the largest chunks).
std::string CostModel::check_held_chunks(const FixedFields& fixed, const ParallelConfig& c, int64_t gpus) const {
  if (fixed.holds("interleave") && c.interleave > 1) {
    if (!fixed.holds("pipeline") && 2 * c.interleave > spec_.layers) {
      return "interleave=" + std::to_string(c.interleave) + " needs pipeline>1 and a layer per chunk: at least 2 × " +
             std::to_string(c.interleave) + " = " + std::to_string(2 * c.interleave) + " chunks for layers=" +
             std::to_string(spec_.layers);
    }
    if (fixed.holds("pipeline") && (c.pipeline == 1 || (fixed.holds("data") && fixed.holds("microbatch")))) {
      if (const std::string problem = interleave_problem(c); !problem.empty()) return problem;
    }
    if (const std::string problem = interleave_count_problem(fixed, c, gpus); !problem.empty()) return problem;
  }
  if (!fixed.holds("pipeline") && !fixed.holds("interleave") && c.recompute_layers == 0) return "";
  const int64_t interleave = fixed.holds("interleave") ? c.interleave : 1;
  const int64_t stages = fixed.holds("pipeline") ? c.pipeline : interleave > 1 ? 2 : 1;  // interleaving needs two stages
  try {
    const PipelineSplit& split = remembered_split(spec_, stages, interleave).split;
    return c.recompute_layers == 0 ? "" : recompute_layers_problem(split, c.recompute_layers);
  } catch (const InputError& e) {
    return e.what();  // fewer layers than chunks
  }
}

}  // namespace axo
