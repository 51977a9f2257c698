// Several plans, each with its run: how well the planner's predicted
// iteration times rank and pick configurations.
//
// For a list of (predicted, measured) iteration times it gives each pair's
// error (comparison.h), Spearman's rho between the predicted and measured
// order (rank_correlation.h), and whether the planner's pick (the lowest
// prediction) ran within 10% of the fastest measured run: the question a
// user of the planner cares about most; and the worst error, whether every
// measured iteration was within 15% of its prediction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/comparison.h"

namespace axo {

struct RunSetEntry {
  std::string label;  // e.g. "plan.yaml vs run.json"
  double predicted_s = 0;
  double measured_s = 0;
};

struct RunSetSummary {
  std::vector<ComparisonRow> iterations;  // one per entry; component = the entry's label
  std::optional<double> spearman;         // absent with fewer than two runs or all tied
  size_t predicted_best = 0;              // index of the lowest prediction (first of ties)
  size_t measured_best = 0;               // index of the fastest run
  // How much slower the planner's pick ran than the fastest run, in percent.
  double pick_slowdown_pct = 0;
  bool pick_within_10pct = false;
  // The largest |error_pct| over the runs, and which run (issue 7's target: 15%).
  double worst_error_pct = 0;
  size_t worst = 0;
  bool worst_within_15pct = false;
};

// Throws InputError on an empty list.
RunSetSummary summarize_run_set(const std::vector<RunSetEntry>& entries);

// One line per entry, then rho and the pick, for people.
std::string run_set_text(const RunSetSummary& summary);
// plan_run,predicted_s,measured_s,error_s,error_pct: one row per entry.
std::string run_set_csv(const RunSetSummary& summary);

}  // namespace axo
