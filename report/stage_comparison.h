// Predicted against measured per pipeline stage, for a plan with stages:
// each stage's layers (model/stage_partition.h's split, chunks joined by
// '+'), the device memory of its fullest rank against the memory model's
// stage_memory (model/memory_model.h), and its ranks' working seconds per
// iteration against the cost model's:
//   measured_s  = compute + tp_comm of run.json's steps[].ranks[] on that
//                 stage, the mean over its ranks and the averaged steps
//                 (run_file.h: the first step left out from three on);
//   predicted_s = m · (L_s · (layer_forward + layer_backward) + ends_s)
// with m microbatches, L_s the stage's layers, the per-layer seconds of the
// plan's `predicted` breakdown where it holds them (a plan costed again on
// --machine; plan.yaml does not store them), else as the cost model prices
// the plan on its machine, and ends_s the embedding (first stage) and the
// final norm, head and loss (last stage) as the cost model explains them on
// that machine (cost_stage.h's T_s). When the machine cannot be loaded the
// ends are left out (`ends_known`), and without per-layer seconds either no
// stage time is predicted (`times_known`: the table says n/a). Under partial
// recompute the per-layer seconds are the slowest stage's average, so a stage
// that recomputes a larger share of its layers is predicted a little fast.
//   error_pct = 100 · (measured − predicted) / predicted
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/machine_profile.h"
#include "model/plan_file.h"
#include "report/run_file.h"
#include "report/run_stages.h"

namespace axo {

struct StageRow {
  int64_t stage = 0;
  std::string layers;  // "2+2": the stage's chunks' layer counts
  double predicted_bytes = 0, measured_bytes = 0;
  std::optional<double> memory_error_pct;
  double predicted_s = 0, measured_s = 0;  // predicted_s: 0 unless times_known
  std::optional<double> time_error_pct;     // none unless times_known
};

struct StageComparison {
  std::vector<StageRow> rows;
  bool ends_known = false;   // the embedding and head's seconds are in predicted_s
  bool times_known = false;  // the layers' seconds are: predicted_s and time_error_pct mean something
};

// `machine`: the profile the plan was priced on, to price the layers (unless the plan's breakdown
// holds them) and the ends on (none: the ends are left out, and the layers with them when the
// plan's breakdown does not hold them).
StageComparison compare_stages(const Plan& plan, const MeasuredRun& run, const std::vector<MeasuredStage>& measured,
                               const std::optional<MachineProfile>& machine);
std::string stage_comparison_table(const StageComparison& comparison);

// The stage that sets the pipeline's pace as the cost model prices it: the largest predicted_s,
// the first on a tie (cost_stage.h's slowest_stage; under partial recompute, with every layer at the
// slowest stage's average, a stage recomputing a larger share may tie where the model tells them
// apart). None unless times_known and ends_known (without the head, stage 0 would win a tie).
std::optional<int64_t> pace_stage(const StageComparison& comparison);
// `run` with its components measured on `stage`'s ranks: the breakdown's compute, tp_comm and
// bubble are the slowest stage's (model/cost_model.h), where run.json's step components are the
// mean over every rank (a faster stage computes less and waits more). `run` as it is when the
// stage recorded no rank.
MeasuredRun run_on_stage(const MeasuredRun& run, const MeasuredStage& stage);

// A pipelined run against its plan, stage by stage, and the run as its pace stage measured it.
struct StagedRun {
  StageComparison comparison;
  std::optional<int64_t> pace;  // pace_stage, where that stage recorded ranks
  MeasuredRun run;              // run_on_stage of the pace stage; the run as read without one
};
// From the stages `run` was read with (MeasuredRun::stages).
StagedRun stage_run(const Plan& plan, const MeasuredRun& run, const std::optional<MachineProfile>& machine);

}  // namespace axo
