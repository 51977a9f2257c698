// Predicted against measured per pipeline stage (see stage_comparison.h).
#include "report/stage_comparison.h"

#include <algorithm>
#include <cstdio>

#include "model/cost_model.h"
#include "model/error.h"
#include "model/memory_model.h"
#include "model/stage_partition.h"
#include "report/comparison.h"
#include "report/comparison_table.h"
#include "report/memory_comparison.h"

namespace axo {

namespace {

// What a stage's prediction is made of: one layer's forward and backward seconds, and the
// embedding's (first stage) and the final norm, head and loss's (last stage) per iteration.
struct StageParts {
  std::optional<double> layer_s;  // none: neither the plan nor a machine says
  double first_end_s = 0, last_end_s = 0;
  bool ends_known = false;
};

// The layer's seconds from the plan's breakdown where it holds them (a plan costed again on
// --machine does; plan.yaml does not store them), else as the cost model prices the plan on
// `machine`, the profile it was priced on; the ends as the cost model explains them there.
StageParts stage_parts(const Plan& plan, const std::optional<MachineProfile>& machine) {
  StageParts parts;
  const double stored = plan.predicted.layer_forward + plan.predicted.layer_backward;
  if (stored > 0) parts.layer_s = stored;
  if (!machine) return parts;
  std::vector<CostItem> items;
  const Breakdown priced = CostModel(plan.model, *machine).explain(plan.config, items);
  for (const CostItem& item : items) {
    if (item.scope == CostScope::first_stage) parts.first_end_s += item.exposed * item.per_iteration;
    if (item.scope == CostScope::last_stage) parts.last_end_s += item.exposed * item.per_iteration;
  }
  parts.ends_known = true;
  if (!parts.layer_s) parts.layer_s = priced.layer_forward + priced.layer_backward;
  return parts;
}

}  // namespace

StageComparison compare_stages(const Plan& plan, const MeasuredRun& run, const std::vector<MeasuredStage>& measured,
                               const std::optional<MachineProfile>& machine) {
  const ParallelConfig& c = plan.config;
  const Plan as_run = plan_as_run(plan, run);
  // The layers as the run split them (its sequence length weighs the embedding and the head).
  const PipelineSplit split = split_pipeline(as_run.model, c.pipeline, c.interleave);
  const StageParts parts = stage_parts(plan, machine);
  StageComparison comparison;
  comparison.ends_known = parts.ends_known;
  comparison.times_known = parts.layer_s.has_value();
  const double microbatches = double(plan.model.global_batch) / double(c.data * c.microbatch);
  for (int64_t s = 0; s < c.pipeline; ++s) {
    StageRow row;
    row.stage = s;
    for (int64_t k = 0; k < split.interleave(); ++k) {
      if (k > 0) row.layers += '+';
      row.layers += std::to_string(split.chunk(s, k).count());
    }
    row.predicted_bytes =
        stage_memory(as_run.model, as_run.config, split, s, executor_memory_stack(run.schedule)).total();
    row.measured_bytes = double(measured[size_t(s)].device_peak);
    row.memory_error_pct = error_percent(row.predicted_bytes, row.measured_bytes);
    row.measured_s = measured[size_t(s)].work_s();
    if (parts.layer_s) {
      row.predicted_s = microbatches * double(split.stage_layers(s)) * *parts.layer_s +
                        (s == 0 ? parts.first_end_s : 0) + (s == c.pipeline - 1 ? parts.last_end_s : 0);
      row.time_error_pct = error_percent(row.predicted_s, row.measured_s);
    }
    comparison.rows.push_back(row);
  }
  return comparison;
}

std::string stage_comparison_table(const StageComparison& comparison) {
  std::string text;
  char line[200];
  std::snprintf(line, sizeof line, "%-6s %-8s %12s %12s %8s %14s %14s %8s\n", "stage", "layers", "predicted_s",
                "measured_s", "error_%", "predicted_MiB", "measured_MiB", "error_%");
  text += line;
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const StageRow& r : comparison.rows) {
    char predicted[32] = "n/a";
    if (comparison.times_known) std::snprintf(predicted, sizeof predicted, "%.6f", r.predicted_s);
    std::snprintf(line, sizeof line, "%-6lld %-8s %12s %12.6f %8s %14.3f %14.3f %8s\n", (long long)r.stage,
                  r.layers.c_str(), predicted, r.measured_s, percent_text(r.time_error_pct).c_str(),
                  r.predicted_bytes / kMiB, r.measured_bytes / kMiB, percent_text(r.memory_error_pct).c_str());
    text += line;
  }
  if (!comparison.times_known) {
    text += "(the machine could not be loaded: no per-stage seconds are predicted; pass --machine with the profile the plan was priced on)\n";
  } else if (!comparison.ends_known) {
    text += "(the machine could not be loaded: predicted_s leaves out the embedding and the head)\n";
  }
  return text;
}

std::optional<int64_t> pace_stage(const StageComparison& comparison) {
  if (!comparison.times_known || !comparison.ends_known || comparison.rows.empty()) return std::nullopt;
  const auto slowest = std::max_element(comparison.rows.begin(), comparison.rows.end(),
                                        [](const StageRow& a, const StageRow& b) { return a.predicted_s < b.predicted_s; });
  return slowest->stage;
}

MeasuredRun run_on_stage(const MeasuredRun& run, const MeasuredStage& stage) {
  MeasuredRun on_stage = run;
  if (stage.ranks > 0) on_stage.components = stage.components;
  return on_stage;
}

StagedRun stage_run(const Plan& plan, const MeasuredRun& run, const std::optional<MachineProfile>& machine) {
  const std::vector<MeasuredStage>& measured = run.stages;
  if (int64_t(measured.size()) != plan.config.pipeline) {
    throw InputError(run.source + ": " + std::to_string(measured.size()) + " pipeline stages measured, the plan has " +
                     std::to_string(plan.config.pipeline));
  }
  StagedRun staged{compare_stages(plan, run, measured, machine), std::nullopt, run};
  const std::optional<int64_t> pace = pace_stage(staged.comparison);
  if (pace && measured[size_t(*pace)].ranks > 0) {
    staged.pace = pace;
    staged.run = run_on_stage(run, measured[size_t(*pace)]);
  }
  return staged;
}

}  // namespace axo
