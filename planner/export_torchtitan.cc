// torchtitan TOML sections for a plan: [parallelism], [activation_checkpoint],
// [training] and, for asynchronous tensor parallelism, [compile].
//
// Sources (read for names and meaning, nothing copied), pytorch/torchtitan
// v0.2.2 (2026-02-20, the last release configured by TOML; later versions
// build the same ParallelismConfig fields in Python and still accept them as
// --section.option flags): torchtitan/config/job_config.py (the keys),
// torchtitan/distributed/parallel_dims.py (mesh ["pp", "dp_replicate",
// "fsdp", "tp"], outermost first), torchtitan/distributed/pipeline_parallel.py
// (stages from pipeline_parallel_layers_per_stage and the first/last stage
// weights), torchtitan/models/llama3/infra/parallelize.py (tensor parallelism
// always shards norms along the sequence: SequenceParallel; it asserts
// seq_len % seq_len_divisor, tp × 2 × cp, and without FSDP applies DDP only
// when the replicas are every rank: "DDP has not supported > 1D parallelism").
//
// Mapping: tensor_parallel_degree = y (x must be 1: torchtitan's tensor
// parallelism is 1D). axo's z shards each weight and splits the batch, all-
// gathering weights forward and reduce-scattering gradients backward: that is
// FSDP, so data_parallel_shard_degree = z, and axo's data (replicas that
// all-reduce gradients) is data_parallel_replicate_degree (HSDP when both are
// above 1). axo's context is context_parallel_degree (torchtitan's ring
// attention over the "cp" mesh dimension). The mesh puts tp innermost, then
// cp, fsdp, dp_replicate, pp: axo's xyczdp. torchtitan shards the weights
// over fsdp and cp together (FSDP on the flattened dp_shard_cp mesh), so
// with context > 1 its weights use less memory than the plan axo costs
// (weights replicated over context, gradients all-reduced over it). Each rank's share of an axo microbatch is microbatch / z sequences:
// with a pipeline that is pipeline_parallel_microbatch_size and
// local_batch_size is the rank's whole step, B / (data·z); without one,
// local_batch_size is the microbatch and torchtitan accumulates gradients over
// global_batch_size / (local_batch_size · data · z) of them (torchtitan/train.py).
// Precision fp8 is the float8 model converter ([model] converters =
// ["quantize.linear.float8"], the name components/quantization/float8.py
// registers, and the [quantize.linear.float8] section: job_config.py
// Model.converters, Quantize.linear.float8, Float8Linear) with tensorwise
// scaling and the output layer left out (filter_fqns), as axo prices the LM
// head in bf16, and y = 1 (v0.2.2's
// parallelize.py enables float8 tensor parallelism under the converter name
// "float8", which its registry no longer has); with FSDP (z > 1) and the
// machine's stack.fp8_weights `gathered`, the weights are all-gathered in
// float8 (enable_fsdp_float8_all_gather), as axo prices that stack.
// Asynchronous tensor parallelism is written where the plan hides the TP
// collectives (overlap on, stack.tp_collectives overlapped); torchtitan
// reduces in float32 only, which a comment says where the stack priced bf16.
// The stages hold the layers axo's split gives them (priced_split): equal
// chunks as pipeline_parallel_layers_per_stage, an unequal split (axo
// balances the LM head) as each model part's modules.
#include <algorithm>
#include <string>
#include <utility>

#include "model/cost_collective.h"
#include "model/cost_fp8.h"
#include "model/error.h"
#include "planner/export.h"

namespace axo {

namespace {

std::string key(const std::string& name, int64_t value) {
  return name + " = " + std::to_string(value) + "\n";
}
std::string key(const std::string& name, const std::string& value) {
  return name + " = \"" + value + "\"\n";
}

// fp8: the float8 converter on every linear layer but the output (LM head).
std::string float8_sections(const MachineProfile& machine, const ParallelConfig& c) {
  std::string text = "\n# fp8 linear layers (torchao Float8Linear), tensorwise scaling; the LM head\n"
                     "# stays bf16 as axo prices it. converters goes into the TOML's own [model].\n"
                     "[model]\n"
                     "converters = [\"quantize.linear.float8\"]\n"
                     "\n[quantize.linear.float8]\n";
  text += key("recipe_name", "tensorwise");
  text += "filter_fqns = [\"output\"]\n";
  if (c.z > 1 && machine.fp8_weights == Fp8Weights::gathered) {
    text += "# FSDP all-gathers the weights in float8, as priced (stack.fp8_weights: gathered).\n"
            "enable_fsdp_float8_all_gather = true\n"
            "precompute_float8_dynamic_scale_for_fsdp = true\n";
  }
  return text;
}

// The stages' layers, as axo split them. Equal chunks: pipeline_parallel_layers_per_stage
// with no layer taken from the first and last stages (torchtitan's
// generate_llm_fqn_per_model_part then cuts equal chunks). Otherwise each chunk's modules
// (module_fqns_per_model_part), chunk k on rank k mod pipeline as torchtitan's looped
// schedules place model parts and axo places chunks.
std::string stage_keys(const TransformerSpec& spec, const PipelineSplit& split) {
  if (equal_chunks(split)) {
    return key("pipeline_parallel_layers_per_stage", split.chunks().front().count()) +
           "# Equal stages, as axo splits them: the embedding and the output layer do not\n"
           "# count as layers.\n" +
           key("pipeline_parallel_first_stage_less_layers", 0) +
           key("pipeline_parallel_last_stage_less_layers", 0);
  }
  std::string text = "# " + split_sentence(spec, split) + ";\n# each model part's modules, as axo priced them.\n"
                     "module_fqns_per_model_part = [\n";
  for (size_t k = 0; k < split.chunks().size(); ++k) {
    const LayerRange& chunk = split.chunks()[k];
    text += "  [";
    std::string names = k == 0 ? "\"tok_embeddings\"" : "";
    for (int64_t layer = chunk.begin; layer < chunk.end; ++layer) {
      names += std::string(names.empty() ? "" : ", ") + "\"layers." + std::to_string(layer) + "\"";
    }
    if (k + 1 == split.chunks().size()) names += ", \"norm\", \"output\"";
    text += names + "],\n";
  }
  return text + "]\n";
}

// The layers of the smallest and the largest chunk of axo's split.
std::pair<int64_t, int64_t> chunk_layer_range(const TransformerSpec& spec, const ParallelConfig& c) {
  int64_t smallest = spec.layers, largest = 0;
  for (const LayerRange& chunk : priced_split(spec, c).chunks()) {
    smallest = std::min(smallest, chunk.count()), largest = std::max(largest, chunk.count());
  }
  return {smallest, largest};
}

}  // namespace

std::string torchtitan_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                                  const ParallelConfig& c) {
  if (c.x != 1) {
    return "its tensor parallelism is one-dimensional (axo's y), so it needs x=1, and this plan "
           "has x=" + std::to_string(c.x);
  }
  if (c.zero > 0) {
    return "its data_parallel_replicate_degree replicas (axo's data) all-reduce whole gradients and each "
           "keep the whole optimizer state; its sharding is FSDP over data_parallel_shard_degree (axo's z), "
           "so zero=" + std::to_string(c.zero) + " has no counterpart";
  }
  if (c.offload) {
    return "training.enable_cpu_offload moves FSDP's parameters and gradients to the host as well "
           "as the optimizer state, not the optimizer alone as offload=on does";
  }
  // v0.2.2 turns float8 tensor parallelism on where model.converters holds "float8"
  // (models/llama3/infra/parallelize.py), a name its registry no longer has: its float8 linears are
  // "quantize.linear.float8" (components/quantization/float8.py), so its gathers run in bf16.
  if (spec.precision == Precision::fp8 && c.y > 1) {
    return "its float8 tensor parallelism is off at v0.2.2 (parallelize.py asks for a converter named "
           "'float8', which its registry names 'quantize.linear.float8'), so y=" + std::to_string(c.y) +
           " would gather in bf16 what axo prices in fp8: plan with y=1";
  }
  if (c.y > 1 && !c.sequence_parallel) {
    return "its tensor parallelism always shards norms and activations along the sequence "
           "(SequenceParallel), so y>1 needs sequence_parallel=on";
  }
  if (c.z > 1 && !c.overlap) {
    return "FSDP always prefetches the weight all-gather and reduce-scatters gradients "
           "asynchronously, so a plan with z>1 and overlap=off does not describe it";
  }
  if (c.data > 1 && c.z == 1 && c.context == 1 && c.data != c.gpus()) {
    return "without FSDP (z=1, context=1) its data_parallel_replicate_degree replicas run DDP, which it applies "
           "only when they are every rank (\"DDP has not supported > 1D parallelism\"), and this plan's data=" +
           std::to_string(c.data) + " replicas have " + std::to_string(c.gpus() / c.data) +
           " ranks each (y × pipeline); with z>1 they are HSDP";
  }
  if (const int64_t divisor = c.y * 2 * c.context; spec.seq_len % divisor != 0) {
    return "it needs seq_len divisible by tensor_parallel_degree × 2 × context_parallel_degree "
           "(parallel_dims.seq_len_divisor), and seq_len=" + std::to_string(spec.seq_len) + " is not by " +
           std::to_string(c.y) + " × 2 × " + std::to_string(c.context) + " = " + std::to_string(divisor);
  }
  if (const auto [smallest, largest] = chunk_layer_range(spec, c);
      partial_recompute(c) && c.recompute_layers >= smallest && c.recompute_layers < largest) {
    return "it checkpoints every k-th block of each model part (selective_ac_option k), and recompute_layers=" +
           std::to_string(c.recompute_layers) + " covers a whole part of " + std::to_string(smallest) + " layers (" +
           split_sentence(spec, priced_split(spec, c)) + ") but not the others: no k gives each part its first " +
           std::to_string(c.recompute_layers) + " layers";
  }
  if (!places_groups_as(c, "xyczdp", priced_groups(spec, machine), machine.gpus_per_node)) {
    return "its device mesh puts tp innermost, then cp, fsdp, dp_replicate and pp (axo's xyczdp), "
           "and rank order " + c.order_string() + " places the groups differently";
  }
  return "";
}

std::string export_torchtitan(const TransformerSpec& spec, const MachineProfile& machine,
                              const ParallelConfig& c, const ExportContext& context) {
  const std::string why = torchtitan_limitation(spec, machine, c);
  if (!why.empty()) throw InputError("torchtitan cannot run this plan: " + why);
  // Async TP hides the TP collectives as the plan priced them (overlap on, the stack's
  // tp_collectives overlapped); with tp_collectives exposed it was priced as eager TP.
  const bool async_tp = c.y > 1 && c.overlap && machine.tp_collectives == TpCollectives::overlapped;

  std::string text = "# torchtitan settings for " + spec.name + " on " +
                     std::to_string(c.gpus()) + " GPUs of " + machine.name + ", from axo plan.\n";
  if (!context.note.empty()) text += "# " + context.note + "\n";
  text +=
      "# axo -> torchtitan: y -> tensor_parallel_degree (x = 1), z -> data_parallel_shard_degree\n"
      "# (FSDP shards each weight and the batch, as axo's z does), data ->\n"
      "# data_parallel_replicate_degree, pipeline -> pipeline_parallel_degree. The mesh\n"
      "# (pp, dp_replicate, fsdp, cp, tp; tp innermost) is axo's rank order xyczdp" +
      same_placement_note(c, "xyczdp", machine.gpus_per_node) + ".\n"
      "# Keys: pytorch/torchtitan v0.2.2 torchtitan/config/job_config.py; merge into the\n"
      "# model's TOML, section by section (its other keys and sections stay as they are).\n"
      "\n[parallelism]\n";
  text += key("data_parallel_replicate_degree", c.data);
  text += key("data_parallel_shard_degree", c.z);
  text += key("tensor_parallel_degree", c.y);
  if (async_tp) text += "enable_async_tensor_parallel = true\n";
  text += key("context_parallel_degree", c.context);
  if (c.context > 1) {
    text += "# torchtitan shards weights over fsdp x cp (dp_shard_cp); axo costs them\n"
            "# replicated over context, so expect less weight memory than predicted.\n";
  }
  text += key("pipeline_parallel_degree", c.pipeline);
  if (c.pipeline > 1) {
    text += key("pipeline_parallel_schedule", c.interleave > 1 ? "Interleaved1F1B" : "1F1B");
    text += stage_keys(spec, priced_split(spec, c));
    text += key("pipeline_parallel_microbatch_size", c.microbatch / c.z);
  }
  text += "\n[activation_checkpoint]\n";
  // The smallest chunk of axo's split: every k-th block recomputes at least N of each chunk. N of
  // the largest chunk or more recompute every layer (full); in between, torchtitan_limitation.
  const int64_t chunk_layers = chunk_layer_range(spec, c).first;
  if (partial_recompute(c) && c.recompute_layers < chunk_layers) {
    // torchtitan checkpoints every k-th block of a stage in full (an integer selective_ac_option):
    // k = L/N recomputes floor(L/k) >= N of a stage's L blocks, at least what the plan recomputes.
    const int64_t every = chunk_layers / c.recompute_layers;
    text += "# The plan recomputes the first " + std::to_string(c.recompute_layers) + " blocks of each of its stages; "
            "torchtitan\n# checkpoints every k-th block of a stage (of " + std::to_string(chunk_layers) +
            " here) in full:\n# 1 in " +
            std::to_string(every) + ", " + std::to_string(chunk_layers / every) + " blocks.\n";
    text += key("mode", "selective");
    text += key("selective_ac_option", std::to_string(every));
  } else {
    text += key("mode", to_string(c.recompute));
  }
  if (c.recompute == Recompute::selective) {
    text += "# Per-operator selective recompute, the closest to recomputing the attention core.\n";
    text += key("selective_ac_option", "op");
  }
  text += "\n[training]\n";
  if (c.pipeline > 1) {
    text += "# One step per rank: local_batch_size sequences in pipeline microbatches.\n";
    text += key("local_batch_size", spec.global_batch / (c.data * c.z));
  } else {
    text += "# Gradient accumulation over global_batch_size / (local_batch_size * data * z)\n"
            "# microbatches.\n";
    text += key("local_batch_size", c.microbatch / c.z);
  }
  text += key("global_batch_size", spec.global_batch);
  text += key("seq_len", spec.seq_len);
  text += key("mixed_precision_param",
              spec.precision == Precision::fp32 ? "float32" : "bfloat16");
  if (spec.precision != Precision::fp32 && c.z * c.data * c.context > 1 &&
      machine.reduce_dtype == ReduceDtype::compute) {
    text += "# torchtitan reduces gradients in float32 (mixed_precision_reduce takes no other value);\n"
            "# the plan was priced reducing in bf16 (stack.reduce_dtype: compute): twice the bytes.\n";
  }
  if (spec.precision == Precision::fp8) text += float8_sections(machine, c);
  if (async_tp) {
    text += "\n# Asynchronous tensor parallelism (the plan's overlap=on) needs torch.compile.\n"
            "[compile]\n"
            "enable = true\n";
  }
  return text;
}

}  // namespace axo
