// fp8 training as Transformer Engine runs it (Megatron-LM --fp8-format
// hybrid, torchtitan's float8 converter): what the cost and memory models
// charge beyond bf16 when the model's precision is fp8.
//
// Only the four linear layers of a block run fp8 GEMMs; the attention core,
// the LM head and every stored tensor stay bf16 (tensor_precision). Charged:
//   GEMMs      at the machine's fp8 rate (peak_tflops.fp8) with the same
//              efficiency curve bf16 has on that shape: the bf16 time scaled
//              by the fp8/bf16 roofline ratio (fp8_gemm_seconds)
//   casts      memory-bound, per layer and microbatch: each linear's input
//              X [m×k] forward and its output gradient dY [m×n] backward,
//              read in bf16 (2 bytes) and written as fp8 plus its fp8
//              transpose for the other GEMM (1 + 1 bytes): 4 bytes an element
//              (Transformer Engine's fused cast-transpose, which also takes
//              the amax). With stack.fp8_casts fused (Transformer Engine's
//              LayerNormLinear and LayerNormMLP) the norm and the activation
//              write QKV's, MLP up's and MLP down's inputs in fp8, each only
//              transposed for dW (2 bytes), and MLP up's dY leaves the
//              activation's backward cast and transposed: the attention
//              output and three output gradients stay cast on their own
//              (machine_profile.h's Fp8Casts). Under sequence parallelism the tensors a layer
//              all-gathers over Y (the plain layers' X, the transposed
//              layers' dY) are cast on the rank's own m/y rows before the
//              gather (3 bytes a local element), and the gathered fp8 tensor
//              is transposed after it (read 1, write 1): 3/y + 2 bytes an
//              element of [m×k] or [m×n], the transpose in backward.
//              Transformer Engine 1.13 module/layernorm_linear.py: the norm
//              writes fp8 (ln_out uint8) and gather_along_first_dim(ln_out)
//              or the userbuffers all-gather moves it, backward
//              tex.fp8_transpose(ln_out_total); module/base.py
//              grad_output_preprocess: "FP8 case with gather: ... cast,
//              transpose for efficient gather" (cast_to_fp8 of the local
//              rows, gather, fp8_transpose). torchao's Float8ColwiseParallel
//              and Float8RowwiseParallel (float8_tensor_parallel.py, which
//              torchtitan applies with tensorwise float8 and TP) cast before
//              the redistribute as well.
//   gathers    those sequence-parallel all-gathers move fp8, 1 byte an
//              element, not bf16's 2 (sequence_parallel_gather_bytes; the
//              same sources); the reduce-scatters stay bf16
//   weights    cast once per iteration (Transformer Engine keeps the fp8
//              weight and its transpose for the later microbatches:
//              is_first_microbatch), 4 bytes per local linear weight element
//              of the x·y block; every microbatch with z > 1, since Z
//              gathers the bf16 weight anew, or where the stack casts in each
//              forward (stack.fp8_weights transient or gathered). Gathered
//              with z > 1: each gather casts the rank's fp32 shard (5 bytes a
//              shard element, twice a microbatch) and moves fp8 (1 byte, not
//              bf16's 2: gathered_weight_bytes, as for primary weights), and
//              backward transposes the gathered fp8 weight for dX (2 bytes:
//              torch._scaled_mm takes its second operand column-major);
//              one all-reduce of the shards' amaxes over Z per iteration
//   amax       the amax of each fp8 tensor (X and W forward, dY backward:
//              8 + 4 fp32 values a layer), latency-bound and exposed, where
//              the stack reduces it (stack.fp8_amax, machine_profile.h):
//              stage (Transformer Engine), one blocking all-reduce of a
//              model chunk's amaxes over every rank of the stage
//              (x·y·z·context·data) as each microbatch's forward of the chunk
//              ends and one as its backward ends, m·v of each an iteration (a
//              recompute's forward, which reuses the first forward's scales,
//              get_old_fp8_meta_tensors_for_recompute, is charged none);
//              tensor (torchao), per layer over the tensor-parallel group
//              x·y. Not over z:
//              Z gathers a weight before the cast (or casts it with the
//              precomputed scale), and a rank's activations are its own
//              (torchao's tensor_to_amax reduces only a tensor-parallel
//              DTensor's amax)
//   memory     an fp8 weight and its transpose, 2 bytes per linear weight
//              element beside the bf16 weight (and its fp32 master in the
//              optimizer state), as the stack holds them
//              (fp8_layer_copy_bytes): cached, every layer's of the rank's
//              x·y·z shard; transient, the computed layer's of the x·y block
//              Z gathered; gathered with z > 1, that layer's transpose alone
//              (1 byte: the gathered fp8 weight is the gather buffer);
//              primary, none (the weights are fp8). fp8 copies of saved
//              activations are not credited: the activation bytes stay
//              bf16's (an overestimate).
#pragma once

#include "model/cost_item.h"
#include "model/cost_shapes.h"

namespace axo {

// The precision tensors are stored and non-linear GEMMs run in: bf16 for fp8, else itself.
Precision tensor_precision(Precision precision);

// A linear layer's GEMM [m×k]·[k×n] in `precision`: gemm_seconds, or for fp8
// the bf16 time times roofline(fp8) / roofline(bf16).
double linear_gemm_seconds(const MachineProfile& machine, Precision precision, double m, double n, double k);

// Empty when `machine` has a rate for `precision` (fp8: and for bf16, its
// tensors'); else why not, naming the field and, when given, the profile's file:
// "precision fp8: machine 'a100' has no fp8 rate (peak_tflops.fp8 in its profile a100.yaml); it prices
// fp32, fp16, bf16".
// A profile's fp16 and bf16 rates are optional, like fp8's: no precision falls back on another's.
// A partial calibration that measured no rate has none for any precision (unmeasured_rates_problem).
std::string precision_problem(Precision precision, const MachineProfile& machine,
                              const std::string& profile_path = "");

struct Fp8LayerCost {
  double forward = 0;   // casts of the linear inputs and the forward amax all-reduce
  double backward = 0;  // casts of the output gradients and the backward amax all-reduce
};
// Bytes per element of the activations a sequence-parallel all-gather over Y
// moves (a plain layer's input, forward and again for dW; a transposed
// layer's output gradient): 1 under fp8, else the stack's (activation_comm_bytes, cost_shapes.h).
double sequence_parallel_gather_bytes(const CostInputs& in);
// One layer's fp8 casts for one microbatch (zero unless fp8).
Fp8LayerCost fp8_layer_casts(const CostInputs& in, const CostRecorder& record);
// One layer's exposed amax all-reduces over the tensor group (zero unless fp8 with stack.fp8_amax tensor).
Fp8LayerCost fp8_amax_reductions(const CostInputs& in, const CostRecorder& record);
// Whether the model prices a collective over every rank of a stage (stage_group): fp8's amaxes under
// Transformer Engine (stack.fp8_amax stage). Only then do the search's rank orders and the exports'
// order check tell orders apart by that group's placement.
bool prices_stage_group(const TransformerSpec& spec, const MachineProfile& machine);
// An iteration's exposed amax all-reduces over the stage's ranks, one per model chunk, microbatch and
// direction on a stage of `stage_layers` (zero unless fp8 with stack.fp8_amax stage).
double fp8_stage_amax(const CostInputs& in, double microbatches, double stage_layers, const CostRecorder& record);
// Bytes per element of a block's linear weights as Z all-gathers them: 1 where
// the stack gathers fp8 (stack.fp8_weights gathered or primary), else the model's.
double gathered_weight_bytes(Precision precision, Fp8Weights held);
inline double gathered_weight_bytes(const CostInputs& in) {
  return gathered_weight_bytes(in.spec.precision, in.machine.fp8_weights);
}
// A stage's layers, and of them those that recompute (all but partial recompute's kept ones).
struct Fp8WeightLayers {
  double stage = 0, recomputed = 0;
};
struct Fp8WeightCost {
  double casts = 0;   // memory-bound: the weight casts and transposes (compute)
  double scales = 0;  // a collective over Z: the precomputed scales' amax all-reduce (tp_comm)
};
// A stage's weight casts over an iteration of `microbatches` (zero unless fp8).
Fp8WeightCost fp8_weight_costs(const CostInputs& in, const Fp8WeightLayers& layers, double microbatches,
                               const CostRecorder& record);
// Bytes of one layer's fp8 weight and transpose on one rank as the stack holds them (zero unless
// fp8): of the rank's x·y·z shard where it keeps them; of the weight Z gathered where it casts
// the layer it computes (transient, gathered, z > 1), only the transpose when gathered in fp8
// (the gathered weight is its own buffer).
double fp8_layer_copy_bytes(const TransformerSpec& spec, const ParallelConfig& config, Fp8Weights held);

}  // namespace axo
