// Export: choosing the format, and finding the nearest plan a framework can
// express when the best one is beyond it.
#include "planner/export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/comm_model.h"
#include "model/cost_collective.h"
#include "model/cost_split.h"
#include "model/error.h"

namespace axo {

namespace {

const char* framework_name(ExportFormat format) {
  switch (format) {
    case ExportFormat::megatron: return "Megatron-LM";
    case ExportFormat::axonn: return "AxoNN";
    case ExportFormat::torchtitan: return "torchtitan";
    case ExportFormat::deepspeed: return "DeepSpeed (Megatron-DeepSpeed)";
    case ExportFormat::slurm: return "Slurm (axo train)";
  }
  return "?";
}

// The rank order each framework builds its process groups in (innermost first).
const char* framework_order(ExportFormat format) {
  switch (format) {
    case ExportFormat::axonn: return "xyzcpd";
    case ExportFormat::torchtitan: return "xyczdp";  // mesh pp, dp_replicate, fsdp, cp, tp
    default: return "xyzcdp";                         // Megatron-LM's tp-cp-ep-dp-pp
  }
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f s", seconds);
  return text;
}

}  // namespace

const char* to_string(ExportFormat format) {
  switch (format) {
    case ExportFormat::megatron: return "megatron";
    case ExportFormat::axonn: return "axonn";
    case ExportFormat::torchtitan: return "torchtitan";
    case ExportFormat::deepspeed: return "deepspeed";
    case ExportFormat::slurm: return "slurm";
  }
  return "?";
}

ExportFormat parse_export_format(const std::string& text) {
  for (ExportFormat format : {ExportFormat::megatron, ExportFormat::axonn, ExportFormat::torchtitan,
                              ExportFormat::deepspeed, ExportFormat::slurm}) {
    if (text == to_string(format)) return format;
  }
  throw InputError("--emit: unknown format '" + text +
                   "' (expected megatron, axonn, torchtitan, deepspeed or slurm)");
}

// Empty when `format` trains in `spec`'s precision; otherwise why not, and the plan to ask for.
// ds_config has no fp8 key and AxoNN's layers no fp8 GEMMs: their nearest, bf16, is slower than
// an fp8 plan's prediction; torchtitan's training.mixed_precision_param is bfloat16 or float32.
std::string export_precision_problem(ExportFormat format, const TransformerSpec& spec) {
  const bool fp8_less = format == ExportFormat::deepspeed || format == ExportFormat::axonn;
  if (!(fp8_less && spec.precision == Precision::fp8) &&
      !(format == ExportFormat::torchtitan && spec.precision == Precision::fp16)) {
    return "";
  }
  return framework_name(format) + std::string(" does not train in ") + to_string(spec.precision) + ", which " +
         spec.name + " is planned in (--precision or the model's): plan it with --precision bf16 to export what " +
         framework_name(format) + " runs, priced as it runs";
}

std::string export_model_problem(ExportFormat format, const TransformerSpec& spec) {
  if (const std::string why = export_precision_problem(format, spec); !why.empty()) return why;
  if (format != ExportFormat::megatron && format != ExportFormat::deepspeed) return "";
  std::vector<std::string> details = spec.approximations;
  // Both take the rotary base as a whole number (--rotary-base, --rotary-position-embeddings-theta).
  if (spec.rope_theta != std::floor(spec.rope_theta)) details.push_back("a rotary base that is not a whole number");
  if (format == ExportFormat::deepspeed) {  // Megatron-LM's flags for them; Megatron-DeepSpeed's has none
    if (spec.rope_scaling_factor > 0) details.push_back("Llama 3.1's rope scaling (rope_scaling_factor)");
    if (spec.qkv_bias) details.push_back("biases on q, k and v alone (qkv_bias)");
    if (spec.qk_norm) details.push_back("norms of q and k (qk_norm)");
  }
  if (details.empty()) return "";
  std::string listed;
  for (const std::string& detail : details) listed += (listed.empty() ? "" : "; ") + detail;
  return std::string("the arguments for ") + framework_name(format) + " would state another model than " +
         spec.name + ": axo writes no flag for these details of it: " + listed;
}

std::string export_plan(ExportFormat format, const TransformerSpec& spec,
                        const MachineProfile& machine, const ParallelConfig& config,
                        const ExportContext& context) {
  if (const std::string why = export_model_problem(format, spec); !why.empty()) {
    throw InputError(std::string("--emit ") + to_string(format) + ": " + why);
  }
  switch (format) {
    case ExportFormat::megatron: return export_megatron(spec, machine, config, context);
    case ExportFormat::axonn: return export_axonn(spec, machine, config, context);
    case ExportFormat::torchtitan: return export_torchtitan(spec, machine, config, context);
    case ExportFormat::deepspeed: return export_deepspeed(spec, machine, config, context);
    case ExportFormat::slurm: return export_slurm(spec, machine, config, context);
  }
  return "";
}

std::string export_limitation(ExportFormat format, const TransformerSpec& spec,
                              const MachineProfile& machine, const ParallelConfig& config) {
  switch (format) {
    case ExportFormat::megatron: return megatron_limitation(spec, machine, config);
    case ExportFormat::axonn: return axonn_limitation(spec, machine, config);
    case ExportFormat::torchtitan: return torchtitan_limitation(spec, machine, config);
    case ExportFormat::deepspeed: return deepspeed_limitation(spec, machine, config);
    case ExportFormat::slurm: return "";
  }
  return "";
}

FixedFields expressible_fields(ExportFormat format, const TransformerSpec& spec, const FixedFields& user,
                               bool framework_values) {
  FixedFields fixed = user;
  auto hold = [&fixed](const char* name, FieldValue value) { fixed.hold(config_field(name), value); };
  switch (format) {
    case ExportFormat::megatron:
      hold("x", 1);
      hold("z", 1);
      // Off unless asked for: it offloads with its distributed optimizer (--optimizer-cpu-offload).
      if (!user.holds("offload")) hold("offload", false);
      hold("overlap", true);
      break;
    case ExportFormat::axonn:  // its limitation refuses any zero (its depth group, z, shards instead)
      hold("zero", 0);
      hold("offload", false);
      hold("sequence_parallel", false);
      hold("interleave", 1);
      hold("context", 1);
      break;
    case ExportFormat::torchtitan:  // as axonn: FSDP (z) shards, replicas keep whole state
      hold("x", 1);
      hold("zero", 0);
      hold("offload", false);
      if (framework_values && spec.precision == Precision::fp8) hold("y", 1);  // its float8 TP is off
      break;
    case ExportFormat::deepspeed:  // zero=2 with a pipeline: the search's rows are filtered
      hold("x", 1);
      hold("z", 1);
      hold("context", 1);
      hold("interleave", 1);
      break;
    case ExportFormat::slurm:
      break;
  }
  if (framework_values && format != ExportFormat::slurm) {
    hold("order", order_code(parse_order(framework_order(format), "export")));
  }
  return fixed;
}

std::optional<PlanRow> nearest_expressible(ExportFormat format, const CostModel& model,
                                           const SearchOptions& options) {
  // First within the user's --fix; then with the values the framework needs in place of the user's
  // (its rank order; y=1 for torchtitan's fp8), which the message names as changed.
  for (bool framework_values : {false, true}) {
    SearchOptions again = options;
    again.fixed = expressible_fields(format, model.spec(), options.fixed, framework_values);
    again.accept = [&](const ParallelConfig& config) {
      return export_limitation(format, model.spec(), model.machine(), config).empty();
    };
    again.top = 1;
    again.prune = true, again.record_points = false;  // a plan, not a picture
    try {
      const SearchResult result = search(model, again);
      if (!result.best.empty()) return result.best.front();
    } catch (const InputError&) {
      // nothing valid with these fields fixed
    }
  }
  return std::nullopt;
}

namespace {

// " It changes --fix a=1 to a=2 (what FRAMEWORK needs)." for the user's held fields the nearest plan
// holds otherwise; "" when it keeps them all.
std::string changed_fix_note(ExportFormat format, const FixedFields& user, const ParallelConfig& nearest) {
  std::string before, after;
  for (const ConfigField& field : config_fields()) {
    if (!user.holds(field) || field.get(user.values) == field.get(nearest)) continue;
    before += std::string(before.empty() ? "" : ",") + field.name + "=" + field.text(field.get(user.values));
    after += std::string(after.empty() ? "" : ",") + field.name + "=" + field.text(field.get(nearest));
  }
  if (before.empty()) return "";
  return " It changes your --fix " + before + " to " + after + " (what " + framework_name(format) + " needs).";
}

}  // namespace

std::string inexpressible_message(ExportFormat format, const CostModel& model,
                                  const SearchOptions& options, const PlanRow& original) {
  const std::string why =
      export_limitation(format, model.spec(), model.machine(), original.config);
  std::string message = std::string("--emit ") + to_string(format) + ": " +
                        framework_name(format) + " cannot run this plan (" +
                        fix_string(original.config) + "): " + why + ".";
  const std::optional<PlanRow> nearest = nearest_expressible(format, model, options);
  if (!nearest) {
    std::string held;  // the user's --fix, which the nearest plan keeps
    for (const ConfigField& field : config_fields()) {
      if (!options.fixed.holds(field)) continue;
      held += std::string(held.empty() ? "" : ",") + field.name + "=" + field.text(field.get(options.fixed.values));
    }
    return message + " No configuration it can express " + (held.empty() ? "fits " : "holds --fix " + held + " and fits ") +
           model.spec().name + " on " + std::to_string(options.gpus) + " GPUs of " + model.machine().name + ".";
  }
  const double original_time = original.breakdown.iter_time;
  const double nearest_time = nearest->breakdown.iter_time;
  char change[64];
  std::snprintf(change, sizeof change, "%+.1f%%", 100.0 * (nearest_time / original_time - 1.0));
  return message + "\nThe nearest plan " + framework_name(format) +
         " can express (the search run again within its limits):\n  --fix " +
         fix_string(nearest->config) + "\n  predicted " + seconds_text(nearest_time) +
         " per iteration, against " + seconds_text(original_time) + " for the plan above (" +
         change + ")." + changed_fix_note(format, options.fixed, nearest->config) +
         "\nRun axo plan again with that --fix to export it.";
}

const PipelineSplit& priced_split(const TransformerSpec& spec, const ParallelConfig& c) {
  return remembered_split(spec, c.pipeline, c.interleave).split;
}

bool equal_chunks(const PipelineSplit& split) {
  for (const LayerRange& chunk : split.chunks()) {
    if (chunk.count() != split.chunks().front().count()) return false;
  }
  return true;
}

std::string split_sentence(const TransformerSpec& spec, const PipelineSplit& split) {
  const std::string text = "axo splits the " + std::to_string(spec.layers) + " layers as " + split.text();
  const int64_t chunks = int64_t(split.chunks().size());
  if (equal_chunks(split)) return text;
  if (spec.layers % chunks != 0) {
    return text + " (" + std::to_string(chunks) + " chunks do not divide them)";
  }
  const SplitWeights weights = split_weights(spec);
  char why[160];
  std::snprintf(why, sizeof why, " (its LM head weighs as much as %.1f layers, so the last chunk holds fewer)",
                weights.head / weights.layer);
  return text + why;
}

std::string fix_string(const ParallelConfig& c) { return config_text(c, ","); }

std::string flag(const std::string& name) { return "  " + name + "\n"; }
std::string flag(const std::string& name, int64_t value) {
  return "  " + name + " " + std::to_string(value) + "\n";
}
std::string decimal_flag(const std::string& name, double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.15g", value);
  return "  " + name + " " + text + "\n";
}

// The recompute flags Megatron-LM and Megatron-DeepSpeed share, as flag lines. Partial
// recompute is Megatron's block method: the first N layers of each pipeline chunk in full.
static std::string recompute_flags(const ParallelConfig& c) {
  switch (c.recompute) {
    case Recompute::full:
      if (partial_recompute(c)) {
        return flag("--recompute-granularity full") + flag("--recompute-method block") +
               flag("--recompute-num-layers", c.recompute_layers);
      }
      return flag("--recompute-granularity full") + flag("--recompute-method uniform") +
             flag("--recompute-num-layers", 1);
    case Recompute::selective:
      return flag("--recompute-granularity selective");
    case Recompute::none:
      break;
  }
  return "";
}

std::string batch_and_shape_flags(const TransformerSpec& spec, const ParallelConfig& c) {
  std::string text;
  if (c.sequence_parallel && c.y > 1) text += flag("--sequence-parallel");
  text += recompute_flags(c);
  text += flag("--micro-batch-size", c.microbatch);
  text += flag("--global-batch-size", spec.global_batch);
  text += flag("--num-layers", spec.layers);
  text += flag("--hidden-size", spec.hidden);
  text += flag("--ffn-hidden-size", spec.ffn_hidden);
  text += flag("--num-attention-heads", spec.heads);
  return text;
}

std::string one_dimensional_tensor_problem(const ParallelConfig& c) {
  if (c.x == 1 && c.z == 1) return "";
  return "its tensor parallelism is one-dimensional (axo's y), so it needs x=1 and z=1, "
         "and this plan has x=" + std::to_string(c.x) + ", z=" + std::to_string(c.z);
}

bool places_groups_as(const ParallelConfig& config, const std::string& order,
                      const std::vector<GridDims>& priced_groups, int64_t gpus_per_node) {
  ParallelConfig other = config;
  other.order = parse_order(order, "export");
  for (GridDim dim : config.order) {
    const GroupPlacement a = place_group(config.size(dim), config.stride(dim), gpus_per_node, config.gpus());
    const GroupPlacement b = place_group(other.size(dim), other.stride(dim), gpus_per_node, other.gpus());
    // A group inside one node uses the same link however its ranks are packed.
    if (a.size != b.size || std::min(a.ranks_per_node, a.size) != std::min(b.ranks_per_node, b.size)) {
      return false;
    }
  }
  for (GridDims group : priced_groups) {
    if (grid_group(config, group, gpus_per_node).ranks_per_node != grid_group(other, group, gpus_per_node).ranks_per_node) {
      return false;
    }
  }
  return true;
}

std::string same_placement_note(const ParallelConfig& config, const std::string& order,
                                int64_t gpus_per_node) {
  if (config.order == parse_order(order, "export")) return "";
  return "; the plan's " + config.order_string() + " places its groups as " + order + " does on " +
         std::to_string(gpus_per_node) + "-GPU nodes";
}

}  // namespace axo
