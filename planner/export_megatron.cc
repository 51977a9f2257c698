// Megatron-LM arguments for a plan, as a bash array to pass to pretrain_gpt.py.
//
// Sources (read for names and meaning, nothing copied), NVIDIA/Megatron-LM at
// d98e8a6 (2026-08): megatron/training/arguments.py and the config
// dataclasses it turns into options (megatron/core/model_parallel_config.py,
// megatron/core/transformer/transformer_config.py,
// megatron/training/config/common_config.py: use_tp_pp_dp_mapping),
// megatron/training/initialize.py (rank order 'tp-cp-ep-dp-pp', or
// 'tp-cp-ep-pp-dp' with --use-tp-pp-dp-mapping),
// megatron/core/tensor_parallel/layers.py (the tensor-parallel dX
// all-reduce or reduce-scatter runs asynchronously under the weight-gradient
// GEMM, relying on CUDA_DEVICE_MAX_CONNECTIONS=1), and the example scripts
// examples/gpt3/train_gpt3_175b_distributed.sh and
// examples/llama/train_llama3_8b_h100_fp8.sh.
//
// Mapping: Megatron's tensor parallelism is axo's 1D special case, its size
// axo's y with x = z = 1; pipeline and data map one to one; axo's microbatch
// (sequences per data-parallel replica) is --micro-batch-size; axo's context
// is --context-parallel-size (its ring attention, "p2p", is Megatron's default
// cp_comm_type: megatron/core/transformer/transformer_config.py). Megatron always
// overlaps the tensor-parallel backward collective, and its data-parallel
// gradient all-reduce overlaps the backward with --overlap-grad-reduce, which
// is what axo's cost model assumes. zero=1 is Megatron's distributed
// optimizer (--use-distributed-optimizer: optimizer state sharded over the
// data ranks, the gradient all-reduce a reduce-scatter plus a parameter
// all-gather, overlapped with --overlap-grad-reduce and --overlap-param-gather,
// megatron/core/distributed/distributed_data_parallel_config.py); offload
// then is --optimizer-cpu-offload with --use-precision-aware-optimizer, which needs it. Megatron keeps each rank's
// whole gradient buffer, so zero=2 has no counterpart, nor offload without it.
// The split is axo's own (priced_split), never merely equal because the layers
// divide (axo's split balances the LM head, so a large vocabulary leaves the
// last chunk fewer layers). Equal chunks: --num-layers-per-virtual-pipeline-stage
// when interleaved. An unequal split whose inner stages are equal, without
// interleaving: --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers (megatron/core/transformer/transformer_block.py).
// Any other split: --pipeline-model-parallel-layout, every chunk in layer order
// (chunk k on pipeline rank k mod P), "t" a transformer layer, "E" the
// embedding, "L" the loss, "|" between chunks, "t*n" n layers
// (megatron/core/transformer/pipeline_parallel_layer_layout.py, Megatron-Core
// 0.13 on).
// Precision fp8 is --bf16 with --fp8-format hybrid, --fp8-amax-history-len
// and --fp8-amax-compute-algo (megatron/training/arguments.py; the values of
// examples/llama/train_llama3_8b_h100_fp8.sh): Transformer Engine's fp8
// linear layers over bf16 tensors, as axo prices them (model/cost_fp8.h).
// The machine's stack says the rest: fp8_weights primary is --fp8-param-gather
// (which needs the distributed optimizer); grad_reduce overlapped is
// --overlap-grad-reduce and --overlap-param-gather, after_backward neither;
// reduce_dtype compute under bf16 is --grad-reduce-in-bf16 (Megatron's bf16
// default reduces in fp32, reduce_dtype fp32).
#include <string>
#include <vector>

#include "model/cost_collective.h"
#include "model/cost_fp8.h"
#include "model/error.h"
#include "planner/export.h"

namespace axo {

namespace {

// Whether an unequal split without interleaving has equal inner stages, so that
// the first and last stages' counts describe it.
bool only_ends_differ(const PipelineSplit& split, const ParallelConfig& c) {
  if (c.interleave > 1) return false;
  for (int64_t s = 2; s + 1 < c.pipeline; ++s) {
    if (split.stage_layers(s) != split.stage_layers(1)) return false;
  }
  return true;
}

// --pipeline-model-parallel-layout's string for `split`: "Et*5|t*4|...|t*3L".
std::string pipeline_layout(const PipelineSplit& split) {
  std::string layout;
  const std::vector<LayerRange>& chunks = split.chunks();
  for (size_t k = 0; k < chunks.size(); ++k) {
    if (k > 0) layout += "|";
    if (k == 0) layout += "E";
    if (chunks[k].count() > 0) layout += "t*" + std::to_string(chunks[k].count());
    if (k + 1 == chunks.size()) layout += "L";
  }
  return layout;
}

// The flags that give Megatron axo's split (see the header): none for equal stages.
std::string split_flags(const TransformerSpec& spec, const ParallelConfig& c) {
  const PipelineSplit& split = priced_split(spec, c);
  if (equal_chunks(split)) {
    return c.interleave > 1 ? flag("--num-layers-per-virtual-pipeline-stage", split.chunks().front().count()) : "";
  }
  if (only_ends_differ(split, c)) {
    return flag("--decoder-first-pipeline-num-layers", split.stage_layers(0)) +
           flag("--decoder-last-pipeline-num-layers", split.stage_layers(c.pipeline - 1));
  }
  return flag("--pipeline-model-parallel-layout \"" + pipeline_layout(split) + "\"");
}

// Whether the plan runs Megatron's distributed optimizer: zero=1, or what needs it (fp8 weights
// kept in fp8, an offloaded optimizer) over one data·context rank, where it shards nothing and
// prices as zero=0 (the search tries zero only where data·context > 1).
bool distributed_optimizer(const TransformerSpec& spec, const MachineProfile& machine, const ParallelConfig& c) {
  const bool needs_it = c.offload || (spec.precision == Precision::fp8 && machine.fp8_weights == Fp8Weights::primary);
  return c.zero == 1 || (needs_it && c.data * c.context == 1);
}

// The dtype Megatron holds and reduces the gradients in, as the stack priced it: by default fp32
// under --bf16 (--grad-reduce-in-bf16 keeps bf16), the model's under --fp16
// (--accumulate-allreduce-grads-in-fp32 takes fp32). Its main_grad buffer is that dtype whatever
// the data-parallel size, as memory_model.h holds it; a stack reducing fp32 copies (fp32_copy) is
// closest to Megatron's fp32, which moves the same bytes.
std::string gradient_dtype_flag(const TransformerSpec& spec, const MachineProfile& machine) {
  const bool fp32 = machine.reduce_dtype != ReduceDtype::compute;
  if ((spec.precision == Precision::bf16 || spec.precision == Precision::fp8) && !fp32) {
    return flag("--grad-reduce-in-bf16");
  }
  if (spec.precision == Precision::fp16 && fp32) return flag("--accumulate-allreduce-grads-in-fp32");
  return "";
}

// The gradient reduction and the distributed optimizer, over data × context, as the machine's
// stack priced them: overlapped with the backward (stack.grad_reduce), in the stack's reduce dtype.
std::string data_parallel_flags(const TransformerSpec& spec, const MachineProfile& machine, const ParallelConfig& c) {
  const bool reduced = c.data * c.context > 1, overlapped = machine.grad_reduce == GradReduce::overlapped;
  std::string text;
  if (reduced && !overlapped) {
    text += "  # the gradients reduced after the backward, as priced (stack.grad_reduce: after_backward)\n";
  }
  if (reduced && overlapped) text += flag("--overlap-grad-reduce");
  text += gradient_dtype_flag(spec, machine);
  // Accumulated outside the weight-gradient GEMMs, as priced (stack.grad_accumulation: separate).
  if (machine.grad_accumulation == GradAccumulation::separate) text += flag("--no-gradient-accumulation-fusion");
  if (distributed_optimizer(spec, machine, c)) {
    text += flag("--use-distributed-optimizer");
    if (reduced && overlapped) text += flag("--overlap-param-gather");
    // Its CPU offload runs on the precision-aware optimizer's code path, which it asserts
    // (arguments.py, "The optimizer cpu offload must be used in conjunction with ..."); its main
    // parameters, gradients and moments stay fp32 by default, as priced.
    if (c.offload) text += flag("--optimizer-cpu-offload") + flag("--use-precision-aware-optimizer");
  }
  return text;
}

}  // namespace

std::string megatron_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                                const ParallelConfig& c) {
  if (std::string why = one_dimensional_tensor_problem(c); !why.empty()) return why;
  if (c.zero == 2) {
    return "its distributed optimizer shards the optimizer state but keeps each rank's whole "
           "gradient buffer (ZeRO-1), so zero=2 has no counterpart; zero=1 does";
  }
  if (spec.precision == Precision::fp8 && machine.fp8_weights == Fp8Weights::primary &&
      !distributed_optimizer(spec, machine, c)) {
    return "its fp8 weights (--fp8-param-gather, the machine's stack.fp8_weights: primary) need its "
           "distributed optimizer, which keeps their fp32 masters: plan with zero=1";
  }
  if (c.offload && !distributed_optimizer(spec, machine, c)) {
    return "offloading the optimizer (--optimizer-cpu-offload) needs its distributed optimizer, "
           "which shards the optimizer state over the data ranks: plan with zero=1";
  }
  if (c.y > 1 && !c.overlap) {
    return "it always overlaps the tensor-parallel backward collective with the weight-gradient "
           "GEMM, so a plan with overlap=off does not describe it";
  }
  const std::vector<GridDims> groups = priced_groups(spec, machine);
  if (!places_groups_as(c, "xyzcdp", groups, machine.gpus_per_node) &&
      !places_groups_as(c, "xyzcpd", groups, machine.gpus_per_node)) {
    return "it orders ranks tensor-innermost, then context, data, pipeline (or pipeline before data "
           "with --use-tp-pp-dp-mapping), and rank order " + c.order_string() +
           " places the groups differently";
  }
  return "";
}

std::string export_megatron(const TransformerSpec& spec, const MachineProfile& machine,
                            const ParallelConfig& c, const ExportContext& context) {
  const std::string why = megatron_limitation(spec, machine, c);
  if (!why.empty()) throw InputError("Megatron-LM cannot run this plan: " + why);
  const bool tp_pp_dp = !places_groups_as(c, "xyzcdp", priced_groups(spec, machine), machine.gpus_per_node);
  const std::string megatron_order = tp_pp_dp ? "xyzcpd" : "xyzcdp";

  std::string text = "# Megatron-LM arguments for " + spec.name + " on " +
                     std::to_string(c.gpus()) + " GPUs of " + machine.name + ", from axo plan.\n";
  if (!context.note.empty()) text += "# " + context.note + "\n";
  text +=
      "# Megatron's tensor parallelism is axo's y (x = z = 1); ranks in Megatron's order " +
      std::string(tp_pp_dp ? "tp-cp-ep-pp-dp" : "tp-cp-ep-dp-pp") + " (axo's " + megatron_order +
      same_placement_note(c, megatron_order, machine.gpus_per_node) + ").\n"
      "# Option names: NVIDIA/Megatron-LM megatron/training/arguments.py.\n"
      "# The vocabulary (" + std::to_string(spec.vocab) +
      ") comes from the tokenizer; add data, tokenizer and optimizer options.\n"
      "# Use: torchrun ... pretrain_gpt.py \"${MEGATRON_ARGS[@]}\" ...\n";
  if (c.y > 1) {
    text += "# Megatron overlaps the tensor-parallel backward collective with the weight-gradient\n"
            "# GEMM only when kernels launch in order (megatron/core/tensor_parallel/layers.py).\n"
            "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
  }
  text += "MEGATRON_ARGS=(\n";
  text += flag("--tensor-model-parallel-size", c.y);
  text += flag("--pipeline-model-parallel-size", c.pipeline);
  if (c.context > 1) text += flag("--context-parallel-size", c.context);
  text += split_flags(spec, c);
  if (tp_pp_dp) text += flag("--use-tp-pp-dp-mapping");
  text += batch_and_shape_flags(spec, c);
  if (spec.kv_heads != spec.heads) {
    text += flag("--group-query-attention");
    text += flag("--num-query-groups", spec.kv_heads);
  }
  text += flag("--seq-length", spec.seq_len);
  text += flag("--max-position-embeddings", spec.position_rows());
  if (spec.mlp == MlpKind::swiglu) text += flag("--swiglu");
  if (spec.norm == NormKind::rmsnorm) text += flag("--normalization RMSNorm");
  if (spec.positions == PositionKind::rope) text += flag("--position-embedding-type rope");
  if (spec.rope_theta != kDefaultRopeTheta) text += decimal_flag("--rotary-base", spec.rope_theta);
  if (spec.rotary_percent < 1) text += decimal_flag("--rotary-percent", spec.rotary_percent);
  if (spec.rope_scaling_factor > 0) {  // Llama 3.1's, as megatron/training/arguments.py applies it
    text += flag("--use-rope-scaling");
    text += decimal_flag("--rope-scaling-factor", spec.rope_scaling_factor);
  }
  if (spec.norm_epsilon != kDefaultNormEpsilon) text += decimal_flag("--norm-epsilon", spec.norm_epsilon);
  if (!spec.bias) text += flag("--disable-bias-linear");
  if (spec.qkv_bias) text += flag("--add-qkv-bias");
  if (spec.qk_norm) text += flag("--qk-layernorm");  // normalized as the model's norm (RMSNorm above)
  if (!spec.tied_embeddings) text += flag("--untie-embeddings-and-output-weights");
  if (!spec.dropout) {
    text += flag("--attention-dropout 0.0");
    text += flag("--hidden-dropout 0.0");
  }
  if (spec.precision == Precision::bf16 || spec.precision == Precision::fp8) text += flag("--bf16");
  if (spec.precision == Precision::fp16) text += flag("--fp16");
  if (spec.precision == Precision::fp8) {
    // Transformer Engine's delayed scaling as NVIDIA's recipes set it: E4M3
    // forward, E5M2 gradients, the max amax of the last 1024 iterations.
    text += flag("--fp8-format hybrid");
    text += flag("--fp8-amax-history-len", 1024);
    text += flag("--fp8-amax-compute-algo max");
    // Weights kept in fp8 and gathered in fp8 (the stack's fp8_weights: primary).
    if (machine.fp8_weights == Fp8Weights::primary) text += flag("--fp8-param-gather");
  }
  text += data_parallel_flags(spec, machine, c);
  text += ")\n";
  return text;
}

}  // namespace axo
