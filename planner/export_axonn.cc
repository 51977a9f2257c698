// AxoNN set-up for a plan: the axonn.init call, the data loader and the
// communication-overlap context of a training step, as Python.
//
// Sources (read for names and meaning, nothing copied), axonn-ai/axonn at
// 660a224 (2024-10): axonn/axonn.py (config.inter_layer_parallel_rank, init(G_inter, G_data, G_intra_r,
// G_intra_c, G_intra_d, gpus_per_node), create_dataloader), axonn/
// communication.py (rank = data·(G_inter·G_intra) + pipeline·G_intra + intra,
// intra = depth·(r·c) + row·c + column: column innermost, then row, depth,
// pipeline, data), axonn/intra_layer/fully_connected.py (the column,
// "inner", group splits a weight's input features and all-reduces the
// forward output; the row, "outer", group splits its output features;
// transpose=True swaps them; depth shards the weight block like FSDP),
// axonn/intra_layer/overlap_communication.py (optimize_communication with
// overlap_all_reduce, overlap_reduce_scatter, overlap_all_gather),
// axonn/inter_layer.py (micro_batch_size slices each GPU's batch; AxoNN_Inter_Layer_Engine
// runs the model each rank passes it, its stage), and
// docs/user_guide.rst.
//
// Mapping: axo x = G_intra_c, y = G_intra_r, z = G_intra_d, pipeline =
// G_inter, data = G_data; axo's rank order xyzpd is AxoNN's. axo's overlap
// (OAR, ORS, OAG) is the three optimize_communication flags. AxoNN splits the
// batch over data and depth, so its micro_batch_size is axo's microbatch / z.
// AxoNN has no fp8 layers: an fp8 plan is refused (export_model_problem).
// With G_inter > 1 the user builds each rank's stage; the export lists the
// layers axo's split (priced_split) gives each one, unequal where axo
// balances the LM head, and picks the rank's by ax.config.inter_layer_parallel_rank.
#include <string>

#include "model/cost_collective.h"
#include "model/cost_fp8.h"
#include "model/error.h"
#include "planner/export.h"

namespace axo {

namespace {

const char* python_bool(bool value) { return value ? "True" : "False"; }

}  // namespace

std::string axonn_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                             const ParallelConfig& c) {
  if (c.context > 1) {
    return "it has no context parallelism (axonn.init's groups are G_inter, G_data and the three "
           "intra-layer ones), so it cannot split sequences over context=" + std::to_string(c.context) + " ranks";
  }
  if (c.sequence_parallel) {
    return "sequence parallelism (sequence_parallel=on) is Megatron-LM's; AxoNN's tensor-parallel "
           "layers have no such mode";
  }
  if (c.interleave > 1) {
    return "its pipeline (axonn/inter_layer.py) keeps one stage per rank, so it cannot interleave "
           "(interleave=" + std::to_string(c.interleave) + ")";
  }
  if (c.zero > 0) {
    return "its data-parallel group (G_data) all-reduces whole gradients and every data rank keeps the "
           "whole optimizer state; AxoNN shards state over its depth group (axo's z) instead, so zero=" +
           std::to_string(c.zero) + " has no counterpart";
  }
  if (c.offload) {
    return "its CPU optimizer (axonn/optim.py CPUAdam) depends on mixed-precision state that "
           "axonn.init no longer sets up, so offload=on has no working counterpart";
  }
  if (!places_groups_as(c, "xyzcpd", priced_groups(spec, machine), machine.gpus_per_node)) {
    return "it orders ranks column (x) innermost, then row (y), depth (z), pipeline and data "
           "(axo's xyzcpd), and rank order " + c.order_string() + " places the groups differently";
  }
  return "";
}

namespace {

// How the plan's recompute runs in AxoNN: torch.utils.checkpoint on the blocks it recomputes.
std::string recompute_comment(const ParallelConfig& c, bool overlap_all_gather) {
  switch (c.recompute) {
    case Recompute::full: {
      std::string text = partial_recompute(c)
                             ? "# Recompute full on the first " + std::to_string(c.recompute_layers) +
                                   " transformer blocks of each stage: checkpoint those\n"
                                   "# (torch.utils.checkpoint); the others keep their activations.\n"
                             : "# Recompute full: checkpoint every transformer block (torch.utils.checkpoint).\n";
      if (overlap_all_gather) {
        text += "# Run the recomputed forward under\n"
                "# axonn.intra_layer.overlap_all_gathers_for_checkpointed_forward(model).\n";
      }
      return text;
    }
    case Recompute::selective:
      return "# Recompute selective: checkpoint only the attention core (scores, softmax,\n"
             "# context) of each block (torch.utils.checkpoint).\n";
    case Recompute::none:
      break;
  }
  return "";
}

// G_inter > 1: each pipeline rank builds its own stage (AxoNN_Inter_Layer_Engine takes
// the rank's model), holding the layers axo's split gives it.
std::string stage_layers_code(const TransformerSpec& spec, const PipelineSplit& split) {
  std::string text = "# G_inter > 1: stages run AxoNN's message-driven pipeline (axonn/inter_layer.py;\n"
                     "# needs mpi4py). Each pipeline rank builds its own stage: transformer layers\n"
                     "# [first, end) below, the embedding on the first stage, the final norm and LM\n"
                     "# head on the last.\n# " + split_sentence(spec, split) + ".\n"
                     "STAGE_LAYERS = [";
  for (int64_t s = 0; s < split.stages(); ++s) {
    const LayerRange& layers = split.chunk(s, 0);  // AxoNN does not interleave: one chunk per stage
    text += std::string(s > 0 ? ", " : "") + "(" + std::to_string(layers.begin) + ", " +
            std::to_string(layers.end) + ")";
  }
  return text + "]\nfirst_layer, end_layer = STAGE_LAYERS[ax.config.inter_layer_parallel_rank]\n";
}

// The `with` line of a training step: the plan's overlaps (optimize_communication's three flags);
// `model` names the module whose weights the all-gathers prefetch.
std::string communication_context(const ParallelConfig& c, const std::string& model) {
  const std::string overlap = python_bool(c.overlap);
  const bool overlap_all_gather = c.overlap && c.z > 1;
  return "    with optimize_communication(overlap_all_reduce=" + overlap + ", overlap_reduce_scatter=" + overlap +
         ",\n                                overlap_all_gather=" + python_bool(overlap_all_gather) +
         (overlap_all_gather ? ", model_object_for_overlapping_allgathers=" + model : "") + "):\n";
}

// torch's name of the dtype the plan computes in (fp8 plans are refused: export_model_problem).
std::string torch_dtype(Precision precision) {
  return precision == Precision::fp32 ? "float32" : precision == Precision::fp16 ? "float16" : "bfloat16";
}

// G_inter = 1: one microbatch a call, its gradients accumulated until the optimizer steps.
// fp16 scales the loss (torch.amp.GradScaler, dynamic, as Megatron's --fp16 and DeepSpeed's
// loss_scale 0): its gradients underflow unscaled.
std::string train_step(const TransformerSpec& spec, const ParallelConfig& c) {
  const bool fp16 = spec.precision == Precision::fp16;
  std::string text = fp16 ? "# fp16: the loss is scaled; step the optimizer with scaler.step(optimizer), then\n"
                            "# scaler.update().\nscaler = torch.amp.GradScaler(\"cuda\")\n\n"
                          : "";
  text += "def train_step(model, batch, loss_fn):\n" + communication_context(c, "model");
  if (spec.precision == Precision::fp32) {
    text += "        loss = loss_fn(model(batch))\n";
  } else {
    text += "        with torch.autocast(device_type=\"cuda\", dtype=torch." +
            torch_dtype(spec.precision) + "):\n            loss = loss_fn(model(batch))\n";
  }
  return text + (fp16 ? "        scaler.scale(loss).backward()\n" : "        loss.backward()\n") + "    return loss\n";
}

// G_inter > 1: AxoNN_Inter_Layer_Engine (axonn/inter_layer.py) runs the stage's microbatches
// message-driven, then the depth- and data-parallel gradient reductions and optimizer.step(),
// under its computation_dtype's autocast (torch.float16 unless told, which scales the loss).
std::string pipeline_train_step(const TransformerSpec& spec, const ParallelConfig& c) {
  return "# With G_inter > 1 the loader yields the GPU's whole batch and AxoNN_Inter_Layer_Engine\n"
         "# runs its microbatches through the pipeline, message-driven: forward, backward, the\n"
         "# depth- and data-parallel gradient reductions and optimizer.step(). The stage module\n"
         "# gives get_input_shape() and get_output_shape(), its microbatch dimension -1.\n"
         "from axonn.inter_layer import AxoNN_Inter_Layer_Engine\n\n"
         "def make_engine(stage, loss_fn):\n"
         "    return AxoNN_Inter_Layer_Engine(stage, loss_fn, computation_dtype=torch." +
         torch_dtype(spec.precision) + ")\n\n"
         "def train_step(engine, batch, labels, optimizer):\n" +
         communication_context(c, "engine.model") +
         "        return engine.forward_backward_optimizer(batch, labels, optimizer)\n";
}

}  // namespace

std::string export_axonn(const TransformerSpec& spec, const MachineProfile& machine,
                         const ParallelConfig& c, const ExportContext& context) {
  const std::string why = axonn_limitation(spec, machine, c);
  if (!why.empty()) throw InputError("AxoNN cannot run this plan: " + why);
  const bool overlap_all_gather = c.overlap && c.z > 1;

  std::string text = "# AxoNN set-up for " + spec.name + " on " + std::to_string(c.gpus()) +
                     " GPUs of " + machine.name + ", from axo plan.\n";
  if (!context.note.empty()) text += "# " + context.note + "\n";
  text +=
      "# axo -> AxoNN: x -> G_intra_c (column: splits a weight's input features),\n"
      "# y -> G_intra_r (row: splits its output features), z -> G_intra_d (depth:\n"
      "# shards each weight block and the batch, like FSDP), pipeline -> G_inter,\n"
      "# data -> G_data. Layers built with transpose=True swap row and column, as\n"
      "# axo's transposed layers (attention output, MLP down) do. AxoNN's rank order,\n"
      "# column innermost, then row, depth, pipeline, data, is axo's xyzcpd" +
      same_placement_note(c, "xyzcpd", machine.gpus_per_node) + ".\n"
      "# Sources: axonn-ai/axonn axonn/axonn.py, axonn/communication.py,\n"
      "# axonn/intra_layer/fully_connected.py, axonn/intra_layer/overlap_communication.py.\n"
      "import torch\n"
      "import torch.distributed as dist\n"
      "from axonn import axonn as ax\n"
      "from axonn.intra_layer import optimize_communication\n"
      "\n"
      "dist.init_process_group(backend=\"nccl\")\n"
      "ax.init(G_inter=" + std::to_string(c.pipeline) + ", G_data=" + std::to_string(c.data) +
      ", G_intra_r=" + std::to_string(c.y) + ", G_intra_c=" + std::to_string(c.x) +
      ", G_intra_d=" + std::to_string(c.z) +
      ", gpus_per_node=" + std::to_string(machine.host_gpus()) + ")\n"  // its local rank: one host's devices
      "\n"
      "# Each (data, depth) rank reads global_batch / (G_data * G_intra_d) = " +
      std::to_string(spec.global_batch / (c.data * c.z)) +
      " sequences\n# of length " + std::to_string(spec.seq_len) + " per step, in microbatches of " +
      std::to_string(c.microbatch / c.z) + ".\n"
      "def make_loader(dataset):\n"
      "    return ax.create_dataloader(dataset, global_batch_size=" +
      std::to_string(spec.global_batch) +
      ", micro_batch_size=" + std::to_string(c.microbatch / c.z) + ")\n\n";
  const int64_t microbatches = spec.global_batch / (c.data * c.microbatch);
  if (c.pipeline == 1 && microbatches > 1) {
    text += "# With G_inter=1 the loader yields microbatches: accumulate gradients over " +
            std::to_string(microbatches) + " of them\n# (train_step each), then step the optimizer.\n";
  }
  if (c.pipeline > 1) text += stage_layers_code(spec, priced_split(spec, c));
  text += recompute_comment(c, overlap_all_gather);
  text += "# The plan's overlap=" + std::string(c.overlap ? "on" : "off") +
          " sets AxoNN's three overlaps: overlap_all_reduce (dX all-reduce\n"
          "# under the dW GEMM), overlap_reduce_scatter (asynchronous dW reduce-scatter) and\n"
          "# overlap_all_gather (prefetched weight all-gather; only with G_intra_d > 1).\n";
  text += c.pipeline > 1 ? pipeline_train_step(spec, c) : train_step(spec, c);
  return text;
}

}  // namespace axo
