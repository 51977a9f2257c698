// Bytes each device holds for a configuration, on the stage that holds most.
//
// Model state, mixed-precision Adam (ZeRO, Rajbhandari et al.): 2-byte
// weights and gradients plus 12 bytes of fp32 master weights and moments per
// parameter (8 when training in fp32; 6 when the stack keeps them in bf16,
// OptimizerState); every weight is sharded over X, Y and
// Z as AxoNN does, and offload moves the 12 (or 8) bytes to host memory.
// ZeRO over the data group's N ranks shards what X, Y and Z leave: zero=1 the
// optimizer state (2 + 2 + 12/N bytes per local parameter, ZeRO's 4 + 12/N),
// zero=2 the gradients too (2 + 14/N); with offload the shard is on the host.
// A stack reducing in fp32 (stack.reduce_dtype) holds 4-byte gradients where the
// weights are whole over Z (Megatron-LM under bf16: 6 + 12/N with its distributed
// optimizer; gradient_bytes in memory_model.cc).
// The group is data × context (zero_shards): context ranks hold the same
// weights, and Megatron-LM's distributed optimizer shards over the
// data-parallel group "with context parallel" (Megatron-Core's
// megatron/core/distributed/distributed_data_parallel.py buckets gradients
// over parallel_state.get_data_parallel_group(with_context_parallel=True)).
// fp8 (cost_fp8.h) adds to the weights the fp8 copy and transpose of each
// local linear weight, 2 bytes per element, as the stack holds them
// (machine_profile.h, Fp8Weights): every layer's when cached; none when the
// weights are fp8 themselves (primary: the transposes replace the 2-byte
// weights, the fp32 masters are the optimizer's 12 bytes); one layer's, the
// one being computed, when transient.
// Activations per layer and microbatch follow Korthikanti et al. 2022
// (arXiv 2205.05198, Table 2), mapped onto the 4D shards: with T = b·s/(z·c)
// local tokens (c: the context ranks, each holding s/c tokens), hidden-space tensors are [T, h/x] (LayerNorm inputs and outputs,
// dropout masks: the "10·sbh"), column-space tensors [T, n/y] (Q, K, V,
// attention context, MLP hidden: the "24·sbh/t"; a per-op selective stack
// keeps the block input, every other matmul output and the attention output
// instead, SelectiveKind), attention matrices
// (b/z)·(a/y)·(s/c)·s (the rank's queries against every key) at 5 bytes each
// with dropout, 2 without (the "5as/h"). A flash-attention stack
// (machine_profile.h) never stores them: its kernel keeps one fp32
// log-sum-exp per query row, (b/z)·(a/y)·(s/c)·4 bytes, and regenerates the
// dropout mask from the RNG state (Dao 2023, arXiv 2307.08691, Algorithm 1
// and section 3.1). With z > 1 the buffers hold the gathered weights of what
// the stack all-gathers at once, twice when prefetching (overlap): one linear
// layer (AxoNN), or one transformer block (FSDP: the current FlatParameter
// and the prefetched next one, Zhao et al. 2023, arXiv 2304.11277, section
// 3.3; never the whole model). Context parallelism adds the ring's two key/value receive
// blocks (2 · 2·T·(kv_heads/y)·d·e bytes) to the buffers. Selective
// recompute drops the attention matrices; full recompute keeps only each
// layer's input plus one layer's working set, on the layers it recomputes
// (recompute_layers: the first of each chunk; the others keep all their
// activations). Each stage holds its own layers
// (stage_partition.h), its chunks' microbatches in flight as its schedule
// holds them (model/pipeline_in_flight.h): stage s min(m, p − s) under 1F1B;
// interleaved, the most its warm-up's 2(p − s − 1) + (v − 1)·p + 1 chunk
// forwards and the steady state's hold at once (every microbatch where m = p
// under Megatron-Core, not in axo's executor); under axo's message-driven
// schedule min(m, p) of each chunk, one of the model's last; the first stage also holds the embedding, the
// last the head and one microbatch's logits (fp16 + fp32, V'/y rows:
// vocab_parallel.h; a fused loss keeps the 2-byte logits only, LossKind).
// That is Megatron-LM's layout; axo's own executor keeps its own
// (stack.activations: axo, model/axo_activations.h), on the same in-flight counts, and its own
// parameters (model/axo_parameters.h: the linears over x·y·z, the norms, biases and embeddings
// whole over Z, V'/y vocabulary rows; ZeRO shards those over data × context as above).
// The fullest stage sets the memory.
#pragma once

#include <cstdint>
#include <vector>

#include "model/breakdown.h"
#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/schedule.h"
#include "model/stage_partition.h"
#include "model/transformer_spec.h"
#include "model/vocab_parallel.h"

namespace axo {

// The ranks ZeRO shards over: data × context.
inline int64_t zero_shards(const ParallelConfig& config) { return config.data * config.context; }
// ZeRO-2 over more than one rank: each rank reduce-scatters its gradients (FSDP's copies around it).
inline bool sharded_gradients(const ParallelConfig& config) { return config.zero >= 2 && zero_shards(config) > 1; }
// ZeRO 1 or 2 over more than one rank: the optimizer state is sharded; with one rank, zero 0's path.
inline bool sharded_optimizer(const ParallelConfig& config) { return config.zero >= 1 && zero_shards(config) > 1; }

// What of the training stack changes memory (the machine profile's stack):
// the attention core, the fp8 weight copies, the loss, how Z-sharded weights
// are gathered, what selective recompute keeps, the optimizer state's
// precision and the gradients' (the reduce dtype's), what a layer keeps for its backward and
// what the backward holds (the activation layout), the microbatches in flight (the schedule).
// The defaults are axo's own executor's (materialized attention, per-linear gathers) and
// Megatron-LM's (fp8 cache, fp32 logits, Korthikanti et al.'s activations and selective
// recompute, fp32 Adam, 1F1B).
struct MemoryStack {
  AttentionKind attention = AttentionKind::materialized;
  Fp8Weights fp8_weights = Fp8Weights::cached;
  LossKind loss = LossKind::fp32_copy;
  WeightGather weight_gather = WeightGather::per_linear;
  SelectiveKind selective = SelectiveKind::attention;
  OptimizerState optimizer_state = OptimizerState::fp32;
  ReduceDtype reduce_dtype = ReduceDtype::compute;
  ActivationLayout activations = ActivationLayout::korthikanti;
  Schedule schedule = Schedule::one_f_one_b;  // the pipeline's, which sets the microbatches in flight
  MemoryStack(AttentionKind attention_kind = AttentionKind::materialized)  // NOLINT: implicit on purpose
      : attention(attention_kind) {}
};
inline MemoryStack memory_stack(const MachineProfile& machine) {
  MemoryStack stack(machine.attention);
  stack.fp8_weights = machine.fp8_weights, stack.loss = machine.loss, stack.weight_gather = machine.weight_gather;
  stack.selective = machine.selective, stack.optimizer_state = machine.optimizer_state;
  stack.reduce_dtype = machine.reduce_dtype;
  stack.activations = machine.activations;
  // axo's executor runs its message-driven schedule unless told otherwise (axo train --schedule).
  if (stack.activations == ActivationLayout::axo) stack.schedule = Schedule::message_driven;
  return stack;
}
// What axo's own executor holds: the defaults above (its materialized attention, per-linear
// gathers, fp32 Adam), its layout of activations and linear buffers (ActivationLayout::axo) and the
// microbatches its schedule keeps in flight. Its runs' reports use it.
inline MemoryStack executor_memory_stack(Schedule schedule = Schedule::message_driven) {
  MemoryStack stack;
  stack.activations = ActivationLayout::axo;
  stack.schedule = schedule;
  return stack;
}

// Bytes per device on the fullest stage, with the stack `stack`.
MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& config,
                                  const MemoryStack& stack = {});
// Same, for stages of `stage_layers` layers each: remembered_split's for the configuration, whose
// chunks also say which layers partial recompute recomputes.
MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& config,
                                  const std::vector<int64_t>& stage_layers, const MemoryStack& stack = {});
// Bytes per device that no setting of `config`'s grid (its pipeline, data, context, x, y and z)
// goes under: the fullest stage holds at least the mean stage's weights and gradients, sharded
// over x·y·z, the gradients over ZeRO-2's data × context at most.
double model_state_floor_bytes(const TransformerSpec& spec, const ParallelConfig& config, const MemoryStack& stack);
// Bytes per device on stage `stage` of `split`.
MemoryBreakdown stage_memory(const TransformerSpec& spec, const ParallelConfig& config, const PipelineSplit& split,
                             int64_t stage, const MemoryStack& stack = {});


// Of stage `stage`'s layers, those full recompute recomputes: the first recompute_layers of each
// of its chunks (partial_recompute), else every layer. The cost model prices the same layers.
int64_t recomputed_layers(const ParallelConfig& config, const PipelineSplit& split, int64_t stage);

// The attention core's stored bytes of one layer for `local_heads` (sequence,
// head) pairs: materialized, the s² probabilities (2 bytes; 5 with dropout:
// probabilities, dropout mask, dropped probabilities); flash, 4·s.
double attention_core_bytes(const TransformerSpec& spec, double local_heads, AttentionKind attention);

// Parameters held by a pipeline stage before sharding over x, y, z: its
// layers, the embedding on the first stage, the final norm and head on the
// last (the whole model when pipeline = 1).
int64_t stage_params(const TransformerSpec& spec, const ParallelConfig& config, const PipelineSplit& split,
                     int64_t stage);
int64_t first_stage_params(const TransformerSpec& spec, const ParallelConfig& config);
// Every stage's stage_params together, whatever the split: each layer once, the embedding, and the
// final norm and head (the head's own copy where a pipeline parts a tied embedding from it).
int64_t pipeline_params(const TransformerSpec& spec, const ParallelConfig& config);
// The stage that holds the most parameters (the first of them on a tie), of stages of
// `stage_layers` layers each, and what it holds.
struct FullestStage {
  int64_t stage = 0;
  int64_t params = 0;
};
FullestStage fullest_stage(const TransformerSpec& spec, const ParallelConfig& config,
                           const std::vector<int64_t>& stage_layers);

}  // namespace axo
