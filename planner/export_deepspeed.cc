// DeepSpeed configuration for a plan: the ds_config JSON, and the
// Megatron-DeepSpeed launch arguments that go with it (the grid, the batch,
// the model shape), as a bash array like the Megatron-LM export's.
//
// Sources (read for names and meaning, nothing copied): microsoft/DeepSpeed
// deepspeed/runtime/config.py and constants.py (train_batch_size,
// train_micro_batch_size_per_gpu, gradient_accumulation_steps,
// gradient_clipping, bf16/fp16 "enabled"; train_batch_size = micro ×
// accumulation × data-parallel size), deepspeed/runtime/zero/config.py
// (zero_optimization: stage, overlap_comm, reduce_scatter,
// contiguous_gradients, offload_optimizer) and zero/offload_config.py
// (device "cpu", pin_memory), deepspeed/runtime/pipe/engine.py
// (PipelineEngine asserts ZeRO stage < 2: "ZeRO-2 and ZeRO-3 are
// incompatible with pipeline parallelism"), deepspeed/runtime/pipe/topology.py
// (PipeModelDataParallelTopology axes pipe, data, model: model innermost);
// microsoft/Megatron-DeepSpeed megatron/arguments.py at f4157be (2024-12-24):
// every option MEGATRON_DS_ARGS writes is checked there (--zero-stage,
// --no-pipeline-parallel, the shape, recompute and precision options;
// --ds-sequence-parallel-size), except --deepspeed and --deepspeed_config,
// which its parser gains from DeepSpeed's add_config_arguments
// and megatron/model/gpt_model.py (GPTModelPipe builds its PipelineModule
// with partition_method='type:transformer', fixed in the code).
//
// Mapping: Megatron-DeepSpeed's tensor parallelism is axo's y (x = z = 1);
// pipeline and data map one to one; axo's microbatch is
// train_micro_batch_size_per_gpu and --micro-batch-size, and DeepSpeed
// accumulates global / (micro × data) of them. zero 0/1/2 is the ZeRO stage;
// with pipeline > 1 DeepSpeed's PipelineEngine takes stage 0 or 1 only, and
// with pipeline = 1 the model runs without PipelineModule
// (--no-pipeline-parallel), which stage 2 needs. offload is
// offload_optimizer on the host (ZeRO-Offload: stage 1 or 2) with
// --cpu-optimizer. overlap_comm is the stack's grad_reduce. Ranks: model
// innermost, then data, then pipe, axo's xyzcdp.
//
// Not expressible (the planner then searches the nearest plan DeepSpeed can
// run, as for the other exports): x > 1 or z > 1 (1D tensor parallelism
// only; ZeRO-3 is not axo's z, and it refuses a pipeline); interleave > 1
// (PipelineEngine has one 1F1B schedule); context > 1 (DeepSpeed-Ulysses,
// --ds-sequence-parallel-size, is an all-to-all over heads, not the ring
// attention axo prices); an unequal split axo chose (GPTModelPipe's
// partition_method 'type:transformer' balances layer counts and leaves the
// embedding and the head out, so only the equal split is axo's); a tensor-
// parallel backward overlapped otherwise than with sequence parallelism (the
// only overlap it has); a gradient reduction the stack prices overlapped where
// DeepSpeed reduces after the backward (a pipeline, or ZeRO stage 0). fp8 has no
// ds_config key: an fp8 plan is refused (export_model_problem).
#include <nlohmann/json.hpp>
#include <string>

#include "model/cost_collective.h"
#include "model/cost_fp8.h"
#include "model/error.h"
#include "planner/export.h"

namespace axo {

namespace {

// Sequences each data-parallel replica accumulates per step: global / (micro × data).
int64_t accumulation_steps(const TransformerSpec& spec, const ParallelConfig& c) {
  return spec.global_batch / (c.microbatch * c.data);
}

// The data-parallel gradient reduction overlaps the backward only under ZeRO stage 1 or 2 with
// overlap_comm, whose hooks reduce each bucket as it is ready (deepspeed/runtime/zero/
// stage_1_and_2.py); stage 0 reduces after the backward (engine.py allreduce_gradients:
// buffered_allreduce_fallback), and the PipelineEngine after the last microbatch's (pipe/schedule.py
// ReduceGrads at the step's end, engine.py _exec_reduce_grads).
bool reduction_can_overlap(const ParallelConfig& c) { return c.pipeline == 1 && c.zero >= 1; }

nlohmann::ordered_json zero_section(const MachineProfile& machine, const ParallelConfig& c) {
  nlohmann::ordered_json zero;
  zero["stage"] = c.zero;
  // As the machine's stack priced the reduction (stack.grad_reduce); deepspeed_limitation refuses
  // an overlapped one DeepSpeed cannot overlap.
  zero["overlap_comm"] = machine.grad_reduce == GradReduce::overlapped && reduction_can_overlap(c);
  zero["reduce_scatter"] = true;  // the gradient reduction axo prices for zero >= 1
  zero["contiguous_gradients"] = true;
  if (c.offload) zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
  return zero;
}

// Megatron-DeepSpeed turns the asynchronous tensor-parallel all-reduce off under --deepspeed, and
// launches the sequence-parallel reduce-scatter asynchronously, before the weight-gradient GEMM
// (megatron/arguments.py at f4157be: async_tensor_model_parallel_allreduce = False;
// megatron/core/tensor_parallel/layers.py): the backward collective overlaps with sequence
// parallelism only.
std::string tensor_overlap_problem(const ParallelConfig& c) {
  if (c.y == 1 || c.overlap == c.sequence_parallel) return "";
  return c.sequence_parallel
             ? "it always overlaps the sequence-parallel reduce-scatter with the weight-gradient GEMM, "
               "so a plan with overlap=off does not describe it"
             : "it never overlaps the tensor-parallel all-reduce (under --deepspeed its asynchronous "
               "all-reduce is off), so a plan with overlap=on and sequence_parallel=off does not describe it";
}

}  // namespace

std::string deepspeed_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                                 const ParallelConfig& c) {
  if (std::string why = one_dimensional_tensor_problem(c); !why.empty()) return why;
  if (c.context > 1) {
    return "its sequence parallelism (DeepSpeed-Ulysses, --ds-sequence-parallel-size) is an "
           "all-to-all over attention heads, not the ring attention axo prices for context=" +
           std::to_string(c.context);
  }
  if (c.interleave > 1) {
    return "its PipelineEngine runs one non-interleaved 1F1B schedule, and this plan has interleave=" +
           std::to_string(c.interleave);
  }
  if (c.pipeline > 1 && c.zero == 2) {
    return "its PipelineEngine accepts ZeRO stage 0 or 1 only, and this plan has pipeline=" +
           std::to_string(c.pipeline) + " with zero=2";
  }
  if (c.offload && c.zero == 0) {
    return "offload_optimizer (ZeRO-Offload) needs ZeRO stage 1 or 2: plan with zero=1";
  }
  if (std::string why = tensor_overlap_problem(c); !why.empty()) return why;
  if (c.data > 1 && machine.grad_reduce == GradReduce::overlapped && !reduction_can_overlap(c)) {
    return std::string(c.pipeline > 1 ? "its PipelineEngine reduces the gradients after the last microbatch's backward"
                                      : "ZeRO stage 0 reduces the gradients after the backward") +
           ", and " + machine.name + "'s stack prices the reduction overlapped with it (stack.grad_reduce: "
           "overlapped): plan with pipeline=1 and zero=1, or on a machine whose stack reduces after_backward";
  }
  // GPTModelPipe checkpoints every k-th layer (--recompute-method uniform) or none: any other
  // method sets its activation_checkpoint_interval to 0 (megatron/model/gpt_model.py at f4157be,
  // "deepspeed's pipeline doesn't support the block recompute method").
  if (c.pipeline > 1 && partial_recompute(c)) {
    return "its PipelineEngine recomputes every layer or none (the block method of recompute_layers=" +
           std::to_string(c.recompute_layers) + " would recompute none), and this plan has pipeline=" +
           std::to_string(c.pipeline);
  }
  if (const PipelineSplit& split = priced_split(spec, c); !equal_chunks(split)) {
    return split_sentence(spec, split) +
           ", and Megatron-DeepSpeed's GPTModelPipe fixes partition_method 'type:transformer', "
           "which balances layer counts without the embedding and the head";
  }
  if (!places_groups_as(c, "xyzcdp", priced_groups(spec, machine), machine.gpus_per_node)) {
    return "its topology puts the model (tensor) ranks innermost, then data, then pipe (axo's "
           "xyzcdp), and rank order " + c.order_string() + " places the groups differently";
  }
  return "";
}

std::string export_deepspeed(const TransformerSpec& spec, const MachineProfile& machine,
                             const ParallelConfig& c, const ExportContext&) {
  const std::string why = deepspeed_limitation(spec, machine, c);
  if (!why.empty()) throw InputError("DeepSpeed cannot run this plan: " + why);
  nlohmann::ordered_json config;
  config["train_batch_size"] = spec.global_batch;
  config["train_micro_batch_size_per_gpu"] = c.microbatch;
  config["gradient_accumulation_steps"] = accumulation_steps(spec, c);
  config["gradient_clipping"] = 1.0;  // Megatron's --clip-grad default
  const bool half_bf16 = spec.precision == Precision::bf16;
  config["bf16"] = {{"enabled", half_bf16}};
  if (spec.precision == Precision::fp16) {
    config["fp16"] = {{"enabled", true}, {"loss_scale", 0}};  // 0: dynamic loss scaling
  } else {
    config["fp16"] = {{"enabled", false}};
  }
  config["zero_optimization"] = zero_section(machine, c);
  config["wall_clock_breakdown"] = false;
  return config.dump(2) + "\n";
}

std::string deepspeed_launch_arguments(const TransformerSpec& spec, const MachineProfile& machine,
                                       const ParallelConfig& c, const ExportContext& context) {
  const std::string why = deepspeed_limitation(spec, machine, c);
  if (!why.empty()) throw InputError("DeepSpeed cannot run this plan: " + why);
  std::string text = "# Megatron-DeepSpeed arguments for " + spec.name + " on " +
                     std::to_string(c.gpus()) + " GPUs of " + machine.name + ", from axo plan.\n";
  if (!context.note.empty()) text += "# " + context.note + "\n";
  text += "# Tensor parallelism is axo's y (x = z = 1); ranks model-innermost, then data, pipe: axo's xyzcdp" +
          same_placement_note(c, "xyzcdp", machine.gpus_per_node) + ".\n"
          "# Option names: microsoft/Megatron-DeepSpeed megatron/arguments.py (checked at f4157be).\n"
          "# Use: deepspeed pretrain_gpt.py \"${MEGATRON_DS_ARGS[@]}\" ...\n";
  if (c.y > 1 && c.sequence_parallel) {  // megatron/arguments.py at f4157be raises without it
    // The deepspeed launcher passes on to other nodes only the variables .deepspeed_env lists
    // (deepspeed/launcher/runner.py, DEEPSPEED_ENVIRONMENT_NAME).
    text += "# Sequence parallelism's reduce-scatter overlaps the weight-gradient GEMM only when kernels\n"
            "# launch in order (megatron/core/tensor_parallel/layers.py). On several nodes, also add the\n"
            "# line CUDA_DEVICE_MAX_CONNECTIONS=1 to .deepspeed_env: the launcher passes on only that file's.\n"
            "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
  }
  text += "MEGATRON_DS_ARGS=(\n";
  text += flag("--deepspeed");
  text += flag("--deepspeed_config " + shell_word(context.deepspeed_config_path));
  text += flag("--zero-stage", c.zero);
  text += flag("--tensor-model-parallel-size", c.y);
  text += flag("--pipeline-model-parallel-size", c.pipeline);
  if (c.pipeline == 1) text += flag("--no-pipeline-parallel");
  text += batch_and_shape_flags(spec, c);
  text += flag("--seq-length", spec.seq_len);
  text += flag("--max-position-embeddings", spec.position_rows());
  if (spec.kv_heads != spec.heads) text += flag("--num-key-value-heads", spec.kv_heads);
  if (spec.mlp == MlpKind::swiglu) text += flag("--swiglu");
  if (spec.norm == NormKind::rmsnorm) text += flag("--normalization rmsnorm");
  if (spec.positions == PositionKind::rope) text += flag("--use-rotary-position-embeddings");
  // megatron/arguments.py at f4157be: --rotary-position-embeddings-theta (an int, dest rope_theta),
  // --rotary-percent, --layernorm-epsilon (RMSNorm's too).
  if (spec.rope_theta != kDefaultRopeTheta) text += decimal_flag("--rotary-position-embeddings-theta", spec.rope_theta);
  if (spec.rotary_percent < 1) text += decimal_flag("--rotary-percent", spec.rotary_percent);
  if (spec.norm_epsilon != kDefaultNormEpsilon) text += decimal_flag("--layernorm-epsilon", spec.norm_epsilon);
  if (!spec.bias) text += flag("--disable-bias-linear");
  if (!spec.tied_embeddings) text += flag("--untie-embeddings-and-output-weights");
  if (!spec.dropout) {  // both default to 0.1 in megatron/arguments.py
    text += flag("--attention-dropout 0.0");
    text += flag("--hidden-dropout 0.0");
  }
  if (spec.precision == Precision::fp16) text += flag("--fp16");
  if (spec.precision == Precision::bf16) text += flag("--bf16");
  // An offloaded optimizer must be DeepSpeedCPUAdam (deepspeed/runtime/engine.py raises otherwise,
  // zero_force_ds_cpu_optimizer), which Megatron-DeepSpeed builds under --cpu-optimizer
  // (megatron/optimizer/__init__.py at f4157be).
  if (c.offload) text += flag("--cpu-optimizer");
  text += ")\n";
  return text;
}

}  // namespace axo
