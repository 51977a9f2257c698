// Predicted against measured (see comparison.h).
#include "report/comparison.h"

namespace axo {

std::optional<double> error_percent(double predicted, double measured) {
  if (predicted == 0) return std::nullopt;
  return 100.0 * (measured - predicted) / predicted;
}

ComparisonRow compare_values(const std::string& component, double predicted_s, double measured_s) {
  ComparisonRow row;
  row.component = component;
  row.predicted_s = predicted_s;
  row.measured_s = measured_s;
  row.error_s = measured_s - predicted_s;
  row.error_pct = error_percent(predicted_s, measured_s);
  return row;
}

Comparison compare(const Breakdown& predicted, const MeasuredRun& measured) {
  Comparison comparison;
  const auto values = components(predicted);
  for (size_t i = 0; i < values.size(); ++i) {
    comparison.rows.push_back(compare_values(kComponentNames[i], values[i], measured.components[i]));
  }
  comparison.rows.push_back(compare_values("total", predicted.iter_time, measured.iteration_s));
  return comparison;
}

}  // namespace axo
