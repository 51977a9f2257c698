// Per-device memory of a configuration (see memory_model.h for the sources).
#include "model/memory_model.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "model/axo_activations.h"
#include "model/axo_buffers.h"
#include "model/axo_parameters.h"
#include "model/cost_fp8.h"
#include "model/cost_shapes.h"
#include "model/cost_split.h"
#include "model/per_op_checkpoint.h"
#include "model/pipeline_in_flight.h"

namespace axo {

namespace {

int64_t head_params(const TransformerSpec& spec, const ParallelConfig& config) {
  const int64_t final_norm = spec.norm == NormKind::layernorm ? 2 * spec.hidden : spec.hidden;
  // A tied head shares the embedding on a single stage; across stages the last
  // stage keeps its own copy (Megatron-LM), synchronised by an all-reduce.
  const bool own_head = !spec.tied_embeddings || config.pipeline > 1;
  return final_norm + (own_head ? spec.vocab * spec.hidden : 0);
}

}  // namespace

double attention_core_bytes(const TransformerSpec& spec, double local_heads, AttentionKind kind) {
  const double seq = double(spec.seq_len);
  if (fused(kind)) return local_heads * seq * 4;  // one fp32 log-sum-exp per query row
  const double e = bytes_per_element(spec.precision);
  return local_heads * seq * seq * (spec.dropout ? 2 * e + 1 : e);  // probabilities (+ dropout mask and output)
}

namespace {

// The rank's (sequence, head) pairs of one layer: with context parallelism the
// rank's s/c query rows (against all s keys), as rows go a 1/c share of the
// local heads.
double local_heads(const TransformerSpec& spec, const ParallelConfig& c) {
  return double(c.microbatch / c.z) * double(spec.heads / c.y) / double(c.context);
}

// torchtitan's op-level selective checkpointing (SelectiveKind::per_op, per_op_checkpoint.h)
// keeps the block's input, the attention kernel's output and the matmul outputs its policy
// saves. Column outputs are [T, width/y]; wo's and w2's are hidden-space, like the block input.
double per_op_saved_elements(const TransformerSpec& spec, const ParallelConfig& c, double tokens,
                             double hidden_elems) {
  const double column = tokens / double(c.y);
  double saved = hidden_elems + column * double(spec.hidden);  // block input, attention output
  for (const CheckpointedMatmul& m : per_op_matmuls(spec)) {
    if (m.saved) saved += m.hidden_space ? hidden_elems : column * m.width;
  }
  return saved;
}

// Activation bytes of one layer for one microbatch on one rank.
double layer_activation_bytes(const TransformerSpec& spec, const ParallelConfig& c, Recompute recompute,
                              const MemoryStack& stack) {
  const double e = bytes_per_element(spec.precision);
  const double tokens = tokens_per_rank(spec, c);
  const double token_split = c.sequence_parallel ? double(c.y) : 1.0;
  const double hidden_elems = tokens * double(spec.hidden) / double(c.x) / token_split;
  if (recompute == Recompute::full) return e * hidden_elems;  // the layer's input
  if (recompute == Recompute::selective && stack.selective == SelectiveKind::per_op) {
    return e * per_op_saved_elements(spec, c, tokens, hidden_elems) +
           attention_core_bytes(spec, local_heads(spec, c), stack.attention);
  }
  // LayerNorm inputs, QKV input, MLP input; two dropout masks at 1 byte.
  const double hidden_space = 4 * e * hidden_elems + (spec.dropout ? 2 * hidden_elems : 0);
  // Q, K, V, attention context, MLP up output and activation output.
  const double column_space =
      e * tokens / double(c.y) *
      double(spec.qkv_width() + spec.hidden + spec.mlp_up_width() + spec.ffn_hidden);
  const double attention =
      recompute == Recompute::selective ? 0 : attention_core_bytes(spec, local_heads(spec, c), stack.attention);
  return hidden_space + column_space + attention;
}

// The transient working set of recompute in backward: full recompute rebuilds
// one layer's whole activations; per-op selective recompute the rest of one
// layer's beside what it kept; Megatron's selective, the attention core,
// within the layer's existing buffers (none).
double recompute_working_bytes(const TransformerSpec& spec, const ParallelConfig& c, const MemoryStack& stack) {
  const double whole = layer_activation_bytes(spec, c, Recompute::none, stack);
  if (c.recompute == Recompute::full) return whole;
  if (c.recompute == Recompute::selective && stack.selective == SelectiveKind::per_op) {
    return whole - layer_activation_bytes(spec, c, Recompute::selective, stack);
  }
  return 0;
}

}  // namespace

namespace {

// What the memory of every stage of one configuration is made of.
struct StageMemoryParts {
  double e = 0;                          // bytes per element
  double shards = 0;                     // x·y·z
  double optimizer_bytes_per_param = 0;  // 12 (8 in fp32), 0 with offload
  double optimizer_shards = 1;           // data·context with zero >= 1, else 1
  double gradient_shards = 1;            // data·context with zero = 2, else 1
  double gradient_e = 0;                 // bytes per gradient element (gradient_bytes)
  double per_layer = 0;                  // activations of one layer and microbatch
  double per_kept_layer = 0;             // the same for a layer partial recompute does not recompute
  double chunk_input = 0;                // a microbatch's chunk input, where the stack keeps it apart (axo)
  double stream = 0;                     // axo: a microbatch's residual stream, elements (its pipeline messages)
  double working = 0;                    // recompute's transient working set (recompute_working_bytes)
  double logits = 0;                     // one microbatch's logits, fp16 and fp32 copies (V'/y rows); axo: its head's stash
  double first_stage_working = 0;        // held besides on the first stage (axo: the embedding's gathered rows)
  double last_stage_working = 0;         // held besides on the last stage (axo: the head's gradients, its rolling view)
  double buffers = 0;                    // communication buffers
  double buffers_per_layer = 0;          // and each layer's own (axo: its linears' fp32 bias columns)
  double fp8_copies_per_layer = 0;       // fp8: the fp8 weights and transposes of one layer (cost_fp8.h)
  Fp8Weights fp8_weights = Fp8Weights::cached;
  int64_t microbatches = 0, params_per_layer = 0, embedding = 0, head = 0;
  Schedule schedule = Schedule::one_f_one_b;  // which sets the microbatches in flight (pipeline_in_flight.h)
  bool executor_layout = false;          // axo's executor: its data-parallel buffers too (axo_buffers.h)
  // axo's executor: a rank's parameters by its layout (axo_parameters.h), a layer's and the first
  // and last stage's besides (on one stage the first's are both).
  AxoParams axo_layer, axo_first, axo_last;
  AxoNormWindows norm_windows;  // and its norms' fp32 windows
  double tied_copy = 0;         // and the tied embedding's copy on either end (axo_buffers.h)
};

// Gathered weights of the largest linear layer, or of one block when the
// stack gathers per block (double-buffered when prefetched; axo's executor: its linears' buffers and
// pools, axo_buffers.h), with a pipeline the point-to-point send and receive buffers (axo's by stage:
// stage_memory_of), and with
// context parallelism the ring's two key/value receive blocks (double-buffered: one computed on while
// the next arrives).
double comm_buffer_bytes(const TransformerSpec& spec, const ParallelConfig& c, const MemoryStack& stack) {
  const double e = bytes_per_element(spec.precision);
  const double tokens = tokens_per_rank(spec, c);
  const double largest_linear = double(std::max({spec.qkv_width() * spec.hidden, spec.mlp_up_width() * spec.hidden,
                                                 spec.ffn_hidden * spec.hidden}));
  const double gathered =
      (stack.weight_gather == WeightGather::per_block ? double(spec.params_per_layer()) : largest_linear) /
      double(c.x * c.y);
  const double gathered_e = gathered_weight_bytes(spec.precision, stack.fp8_weights);  // fp8 gathers: 1 byte
  // axo's executor: its linears' own buffers and Z pools (axo_buffers.h).
  double buffers = stack.activations == ActivationLayout::axo ? axo_linear_buffer_bytes(spec, c)
                   : c.z > 1                                   ? gathered * gathered_e * (c.overlap ? 2 : 1)
                                                               : 0;
  if (c.pipeline > 1 && stack.activations != ActivationLayout::axo) {  // axo's: by stage (axo_buffers.h)
    buffers += 2 * e * tokens * double(spec.hidden) / double(c.x);  // p2p send and receive
  }
  if (c.context > 1) {
    // K and V of the rank's tokens: [T, kv_heads/y · d] each, two blocks.
    buffers += 2 * 2 * e * tokens * double(spec.kv_heads / c.y) * double(spec.head_dim());
  }
  return buffers;
}

// Bytes per element of the gradients a rank holds: fp32's where the weights are whole over Z and
// the stack holds them in its reduce dtype (held_gradient_bytes; Megatron-LM's main_grad buffer:
// under bf16 it accumulates and reduces in fp32, core_r0.8.0 megatron/training/arguments.py; its
// distributed optimizer then holds 6 + 12/d
// bytes per parameter, docs/source/api-guide/dist_optimizer.md). With z > 1 (FSDP) the sharded
// fp32 gradient sits with the sharded fp32 parameter, which is the optimizer's master: 16 bytes
// in all, as booked (the 2-byte weight stands for the fp32 one's other half).
double gradient_bytes(const TransformerSpec& spec, const ParallelConfig& c, const MemoryStack& stack) {
  const double e = bytes_per_element(spec.precision);
  return c.z == 1 ? held_gradient_bytes(stack.reduce_dtype, e) : e;
}

// axo's executor (axo_activations.h): its stashes in the training precision, its backward's
// buffers in fp32, the head's on the last stage.
void set_axo_activations(const TransformerSpec& spec, const ParallelConfig& c, StageMemoryParts& parts) {
  const AxoActivationShapes s = axo_activation_shapes(spec, c);
  parts.per_layer = parts.e * (c.recompute == Recompute::full ? s.stream : s.layer);
  parts.per_kept_layer = parts.e * s.layer;
  parts.chunk_input = parts.e * s.stream;
  parts.stream = s.stream;
  const AxoBackwardBytes backward = axo_backward_bytes(spec, c);
  parts.working = backward.every_stage;
  parts.logits = parts.e * s.head;
  parts.first_stage_working = backward.first_stage;
  parts.last_stage_working = backward.last_stage;
}

StageMemoryParts stage_memory_parts(const TransformerSpec& spec, const ParallelConfig& c, const MemoryStack& stack) {
  StageMemoryParts parts;
  parts.e = bytes_per_element(spec.precision);
  parts.shards = double(c.x * c.y * c.z);
  // fp32 training: two fp32 moments (8 bytes); mixed precision: fp32 master and moments (12), or all
  // three in bf16 (6) when the stack keeps the optimizer state in bf16.
  const double state_bytes = spec.precision == Precision::fp32            ? 8
                             : stack.optimizer_state == OptimizerState::bf16 ? 6
                                                                             : 12;
  parts.optimizer_bytes_per_param = c.offload ? 0 : state_bytes;
  parts.optimizer_shards = c.zero >= 1 ? double(zero_shards(c)) : 1;
  parts.gradient_shards = c.zero >= 2 ? double(zero_shards(c)) : 1;
  parts.gradient_e = gradient_bytes(spec, c, stack);
  parts.executor_layout = stack.activations == ActivationLayout::axo;
  if (parts.executor_layout) {
    set_axo_activations(spec, c, parts);
    parts.buffers_per_layer = axo_linear_buffer_bytes_per_layer(spec, c);
    parts.axo_layer = axo_layer_params(spec, c);
    parts.axo_first = axo_end_params(spec, c, 0);
    parts.axo_last = axo_end_params(spec, c, c.pipeline - 1);
    parts.norm_windows = axo_norm_window_bytes(spec, c);
    parts.tied_copy = axo_tied_embedding_bytes(spec, c);
  } else {
    parts.per_layer = layer_activation_bytes(spec, c, c.recompute, stack);
    parts.per_kept_layer = layer_activation_bytes(spec, c, Recompute::none, stack);
    parts.working = recompute_working_bytes(spec, c, stack);
    // The logits [T, V'/y] in the training precision, plus the fp32 copy the
    // softmax reads unless the loss is fused (LossKind).
    const double logit_bytes = parts.e + (stack.loss == LossKind::fused ? 0 : 4);
    parts.logits = tokens_per_rank(spec, c) * double(padded_vocab(spec, c.y)) / double(c.y) * logit_bytes;
  }
  parts.buffers = comm_buffer_bytes(spec, c, stack);
  parts.fp8_copies_per_layer = fp8_layer_copy_bytes(spec, c, stack.fp8_weights);
  parts.fp8_weights = stack.fp8_weights;
  parts.microbatches = spec.global_batch / (c.data * c.microbatch);
  parts.schedule = stack.schedule;
  parts.params_per_layer = spec.params_per_layer();
  parts.embedding = spec.embedding_params();
  parts.head = head_params(spec, c);
  return parts;
}

// Layers whose fp8 weight copies a stage of `layers` layers holds at once.
double fp8_copied_layers(Fp8Weights weights, double layers) {
  switch (weights) {
    case Fp8Weights::cached: return layers;                      // kept from the first microbatch on
    case Fp8Weights::primary: return 0;                          // the weights are the fp8 copies
    case Fp8Weights::transient:                                  // the layer being computed
    case Fp8Weights::gathered: return std::min(layers, 1.0);
  }
  return layers;
}

int64_t params_of(const StageMemoryParts& parts, const ParallelConfig& c, int64_t layers, int64_t stage) {
  int64_t params = layers * parts.params_per_layer;
  if (stage == 0) params += parts.embedding;
  if (stage == c.pipeline - 1) params += parts.head;
  return params;
}

// What axo's executor holds on stage `stage` besides its layers (axo_parameters.h): the
// first stage's or the last's, each one bucket.
AxoParams axo_end_bucket(const StageMemoryParts& parts, const ParallelConfig& c, int64_t stage) {
  if (stage == 0) return parts.axo_first;
  return stage == c.pipeline - 1 ? parts.axo_last : AxoParams{};
}

// A rank's parameters of stage `stage` with `layers` layers as axo's executor's layout holds them.
AxoParams held_stage_params(const StageMemoryParts& parts, const ParallelConfig& c, int64_t layers, int64_t stage) {
  AxoParams local = double(layers) * parts.axo_layer;
  local += axo_end_bucket(parts, c, stage);
  return local;
}

// A stage's layers: `layers` in all, in the chunks of `split` (null: one chunk), and what they hold
// at the peak where it is known (`hold`: remembered_holds').
struct StageLayers {
  const PipelineSplit* split = nullptr;
  int64_t layers = 0;
  const StageHold* hold = nullptr;
};

// Megatron-Core's interleaved 1F1B runs every forward first where m = p; axo's executor does not.
PipelineHold pipeline_hold(const StageMemoryParts& parts) { return {parts.schedule, !parts.executor_layout}; }

// stage_holds for a remembered split (which lives as long as the program: cost_split.h), kept per
// thread: the search asks for the same few many times.
const std::vector<StageHold>& remembered_holds(const PipelineSplit& split, int64_t microbatches,
                                               const PipelineHold& hold) {
  using Key = std::tuple<const PipelineSplit*, int64_t, Schedule, bool>;
  thread_local std::map<Key, std::vector<StageHold>> kept;
  thread_local const std::pair<const Key, std::vector<StageHold>>* last = nullptr;  // consecutive asks alike
  const Key key{&split, microbatches, hold.schedule, hold.all_forwards_first_at_m_equal_p};
  if (last && last->first == key) return last->second;
  auto found = kept.find(key);
  if (found == kept.end()) found = kept.emplace(key, stage_holds(split, microbatches, hold)).first;
  last = &*found;
  return found->second;
}

// What stage `stage`'s chunks hold at the peak (pipeline_in_flight.h).
StageHold stage_hold(const StageMemoryParts& parts, const ParallelConfig& c, const StageLayers& layers,
                     int64_t stage) {
  if (layers.hold) return *layers.hold;
  if (layers.split) return stage_holds(*layers.split, parts.microbatches, pipeline_hold(parts))[size_t(stage)];
  thread_local std::vector<int64_t> one(1);
  one[0] = layers.layers;
  return {held_chunks(one, c.pipeline, parts.microbatches, stage, pipeline_hold(parts)), layers.layers, layers.layers};
}

// The activations stage `stage` holds at its peak, its chunks' microbatches in flight by schedule:
// a microbatch of a chunk of l layers keeps a·l + b bytes, its layers' and its input (axo's
// layout), alike in every chunk where recompute recomputes the same of each (partial recompute's
// first recompute_layers: all of every chunk's, or that many of each); otherwise chunk by chunk.
double held_activations(const StageMemoryParts& parts, const ParallelConfig& c, const StageLayers& layers,
                        int64_t stage) {
  const StageHold h = stage_hold(parts, c, layers, stage);
  double a = parts.per_layer, b = parts.chunk_input;
  const int64_t recomputed = c.recompute_layers;
  if (partial_recompute(c) && recomputed < h.most_layers) {
    if (recomputed > h.fewest_layers) {
      std::vector<double> bytes;
      for (int64_t k = 0; k < layers.split->interleave(); ++k) {
        const int64_t l = layers.split->chunk(stage, k).count(), r = std::min(l, recomputed);
        bytes.push_back(double(r) * parts.per_layer + double(l - r) * parts.per_kept_layer + parts.chunk_input);
      }
      return held_activation_bytes(bytes, c.pipeline, parts.microbatches, stage, pipeline_hold(parts));
    }
    a = parts.per_kept_layer, b += double(recomputed) * (parts.per_layer - parts.per_kept_layer);
  }
  return a * h.held.layers + b * h.held.chunks;
}

// What axo's executor holds besides on stage `stage` of `held` parameters: its data-parallel
// reduction's buffers and gradients' buckets, its pipeline messages or (given back before it) the
// tied embedding's copy, its norms' fp32 windows (axo_buffers.h, axo_parameters.h).
void add_axo_executor_bytes(const StageMemoryParts& parts, const ParallelConfig& c, const AxoParams& held,
                            int64_t stage, MemoryBreakdown& m) {
  const AxoDataParallelBytes dp =
      axo_data_parallel_bytes(c, parts.e, held, parts.axo_layer, axo_end_bucket(parts, c, stage).total());
  const double messages = axo_pipeline_buffer_bytes(c, parts.schedule, parts.stream, stage);
  const double tied = stage == 0 || stage == c.pipeline - 1 ? parts.tied_copy : 0;
  m.comm_buffers += dp.comm_buffers + std::max(messages, tied);
  m.weights += parts.norm_windows.weights;
  m.gradients += dp.gradients + parts.norm_windows.gradients;
}

// Stage `stage` of `stage_layers`.
MemoryBreakdown stage_memory_of(const StageMemoryParts& parts, const ParallelConfig& c, const StageLayers& stage_layers,
                                int64_t stage) {
  const int64_t layers = stage_layers.layers;
  // Summed in this order since before the axo layout: its parts are 0 in Megatron-LM's.
  double activations = held_activations(parts, c, stage_layers, stage);
  if (stage == c.pipeline - 1 && c.pipeline > 1) activations += parts.logits;
  activations += parts.working;
  if (c.pipeline == 1) activations += parts.logits;
  if (stage == 0) activations += parts.first_stage_working;
  if (stage == c.pipeline - 1) activations += parts.last_stage_working;
  // A rank's parameters: as axo's executor's layout holds them, else an x·y·z-th of each.
  const AxoParams held = parts.executor_layout ? held_stage_params(parts, c, layers, stage) : AxoParams{};
  const double local =
      parts.executor_layout ? held.total() : double(params_of(parts, c, layers, stage)) / parts.shards;
  MemoryBreakdown m;
  m.weights = local * parts.e + parts.fp8_copies_per_layer * fp8_copied_layers(parts.fp8_weights, double(layers));
  m.gradients = local * parts.gradient_e / parts.gradient_shards;
  m.optimizer = local * parts.optimizer_bytes_per_param / parts.optimizer_shards;
  m.activations = activations;
  m.comm_buffers = parts.buffers + double(layers) * parts.buffers_per_layer;
  if (parts.executor_layout) add_axo_executor_bytes(parts, c, held, stage, m);
  return m;
}

}  // namespace

namespace {

// Stage `stage`'s parameters with `layers` layers: theirs, the embedding on the first stage, the
// final norm and head on the last.
int64_t params_with_layers(const TransformerSpec& spec, const ParallelConfig& config, int64_t layers, int64_t stage) {
  return layers * spec.params_per_layer() + (stage == 0 ? spec.embedding_params() : 0) +
         (stage == config.pipeline - 1 ? head_params(spec, config) : 0);
}

}  // namespace

int64_t stage_params(const TransformerSpec& spec, const ParallelConfig& config, const PipelineSplit& split,
                     int64_t stage) {
  return params_with_layers(spec, config, split.stage_layers(stage), stage);
}

int64_t first_stage_params(const TransformerSpec& spec, const ParallelConfig& config) {
  return stage_params(spec, config, remembered_split(spec, config.pipeline, config.interleave).split, 0);
}

int64_t pipeline_params(const TransformerSpec& spec, const ParallelConfig& config) {
  return spec.layers * spec.params_per_layer() + spec.embedding_params() + head_params(spec, config);
}

double model_state_floor_bytes(const TransformerSpec& spec, const ParallelConfig& c, const MemoryStack& stack) {
  const double mean_stage = double(pipeline_params(spec, c)) / double(c.pipeline * c.x * c.y * c.z);
  return mean_stage * (bytes_per_element(spec.precision) + gradient_bytes(spec, c, stack) / double(zero_shards(c)));
}

FullestStage fullest_stage(const TransformerSpec& spec, const ParallelConfig& config,
                           const std::vector<int64_t>& stage_layers) {
  FullestStage fullest{0, params_with_layers(spec, config, stage_layers[0], 0)};
  for (int64_t s = 1; s < config.pipeline; ++s) {
    const int64_t params = params_with_layers(spec, config, stage_layers[size_t(s)], s);
    if (params > fullest.params) fullest = {s, params};
  }
  return fullest;
}

int64_t recomputed_layers(const ParallelConfig& c, const PipelineSplit& split, int64_t stage) {
  return partial_recompute(c) ? split.leading_layers(stage, c.recompute_layers) : split.stage_layers(stage);
}

MemoryBreakdown stage_memory(const TransformerSpec& spec, const ParallelConfig& c, const PipelineSplit& split,
                             int64_t stage, const MemoryStack& stack) {
  return stage_memory_of(stage_memory_parts(spec, c, stack), c, {&split, split.stage_layers(stage)}, stage);
}

MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& c,
                                  const std::vector<int64_t>& stage_layers, const MemoryStack& stack) {
  const StageMemoryParts parts = stage_memory_parts(spec, c, stack);
  // The split's chunks where a stage has several or partial recompute picks layers in each (looked
  // up only then: the search's hot path).
  const bool by_chunk = c.interleave > 1 || partial_recompute(c);
  const PipelineSplit* split = by_chunk ? &remembered_split(spec, c.pipeline, c.interleave).split : nullptr;
  const std::vector<StageHold>* holds =
      split ? &remembered_holds(*split, parts.microbatches, pipeline_hold(parts)) : nullptr;
  MemoryBreakdown fullest;
  for (int64_t s = 0; s < c.pipeline; ++s) {
    const StageHold* hold = holds ? &(*holds)[size_t(s)] : nullptr;
    const MemoryBreakdown m = stage_memory_of(parts, c, {split, stage_layers[size_t(s)], hold}, s);
    if (s == 0 || m.total() > fullest.total()) fullest = m;
  }
  return fullest;
}

MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& c, const MemoryStack& stack) {
  return memory_per_device(spec, c, remembered_split(spec, c.pipeline, c.interleave).stage_layers, stack);
}

}  // namespace axo
