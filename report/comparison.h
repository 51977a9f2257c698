// Predicted against measured, component by component: what the planner said
// an iteration would cost (plan.yaml's `predicted`) and what the run took.
//
// For each component of kComponentNames and for the whole iteration:
//   error_s   = measured − predicted   (positive: the run was slower than predicted)
//   error_pct = 100 · error_s / predicted
// A prediction of zero has no relative error (not infinity): error_pct is
// then absent and printed as "n/a".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/breakdown.h"
#include "report/run_file.h"

namespace axo {

struct ComparisonRow {
  std::string component;  // a name of kComponentNames, or "total"
  double predicted_s = 0;
  double measured_s = 0;
  double error_s = 0;
  std::optional<double> error_pct;
};

struct Comparison {
  std::vector<ComparisonRow> rows;  // the seven components in order, then "total"
  const ComparisonRow& total() const { return rows.back(); }
};

// 100 · (measured − predicted) / predicted; none when predicted is 0.
std::optional<double> error_percent(double predicted, double measured);
ComparisonRow compare_values(const std::string& component, double predicted_s, double measured_s);
// The total compares predicted.iter_time with measured.iteration_s (the mean
// measured iteration, which may exceed the sum of the measured components by
// what the executor did not attribute).
Comparison compare(const Breakdown& predicted, const MeasuredRun& measured);

}  // namespace axo
