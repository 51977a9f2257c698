// Several plans with their runs (see run_set.h).
#include "report/run_set.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "model/csv_text.h"
#include "model/error.h"
#include "report/rank_correlation.h"

namespace axo {

RunSetSummary summarize_run_set(const std::vector<RunSetEntry>& entries) {
  if (entries.empty()) throw InputError("no runs to compare");
  RunSetSummary summary;
  std::vector<double> predicted, measured;
  for (const RunSetEntry& entry : entries) {
    summary.iterations.push_back(compare_values(entry.label, entry.predicted_s, entry.measured_s));
    predicted.push_back(entry.predicted_s);
    measured.push_back(entry.measured_s);
  }
  summary.spearman = spearman_correlation(predicted, measured);
  summary.predicted_best = size_t(std::min_element(predicted.begin(), predicted.end()) - predicted.begin());
  summary.measured_best = size_t(std::min_element(measured.begin(), measured.end()) - measured.begin());
  const double fastest = measured[summary.measured_best];
  const double picked = measured[summary.predicted_best];
  summary.pick_slowdown_pct = fastest > 0 ? 100.0 * (picked - fastest) / fastest : 0.0;
  summary.pick_within_10pct = picked <= 1.10 * fastest;
  for (size_t i = 0; i < summary.iterations.size(); ++i) {
    const std::optional<double>& pct = summary.iterations[i].error_pct;
    const double size = pct ? std::abs(*pct) : std::numeric_limits<double>::infinity();
    if (i == 0 || size > summary.worst_error_pct) summary.worst_error_pct = size, summary.worst = i;
  }
  summary.worst_within_15pct = summary.worst_error_pct <= 15.0;
  return summary;
}

std::string run_set_text(const RunSetSummary& s) {
  std::string text;
  char line[512];
  for (size_t i = 0; i < s.iterations.size(); ++i) {
    const ComparisonRow& row = s.iterations[i];
    char percent[32] = "n/a";
    if (row.error_pct) std::snprintf(percent, sizeof percent, "%+.1f%%", *row.error_pct);
    std::snprintf(line, sizeof line, "%2zu  predicted %10.4f s  measured %10.4f s  error %+10.4f s %8s  %s\n",
                  i + 1, row.predicted_s, row.measured_s, row.error_s, percent, row.component.c_str());
    text += line;
  }
  if (s.spearman) {
    std::snprintf(line, sizeof line, "Spearman rank correlation (predicted vs measured order): %+.3f over %zu runs\n",
                  *s.spearman, s.iterations.size());
  } else {
    std::snprintf(line, sizeof line,
                  "Spearman rank correlation: n/a (needs two or more runs whose predictions differ and whose "
                  "measurements differ)\n");
  }
  text += line;
  std::snprintf(line, sizeof line,
                "Planner's pick: run %zu (lowest prediction) measured %.4f s, %.1f%% slower than the "
                "fastest (run %zu, %.4f s): %s\n",
                s.predicted_best + 1, s.iterations[s.predicted_best].measured_s, s.pick_slowdown_pct,
                s.measured_best + 1, s.iterations[s.measured_best].measured_s,
                s.pick_within_10pct ? "within 10%" : "NOT within 10%");
  text += line;
  std::snprintf(line, sizeof line, "Worst |error| of a predicted iteration: %.1f%% (run %zu): %s\n",
                s.worst_error_pct, s.worst + 1,
                s.worst_within_15pct ? "every run within 15%" : "NOT every run within 15%");
  text += line;
  return text;
}

std::string run_set_csv(const RunSetSummary& summary) {
  std::string text = csv_line({"plan_run", "predicted_s", "measured_s", "error_s", "error_pct"});
  for (const ComparisonRow& row : summary.iterations) {
    text += csv_line({row.component, csv_number(row.predicted_s), csv_number(row.measured_s),
                      csv_number(row.error_s), csv_number(row.error_pct)});
  }
  return text;
}

}  // namespace axo
