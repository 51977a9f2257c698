// Error bands from leave-one-source-out residuals (see error_band.h).
#include "planner/error_band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace axo {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of an empty list");
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * double(values.size() - 1);
  const size_t below = size_t(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - double(below)) * (values[above] - values[below]);
}

size_t minimum_band_runs(double coverage) {
  if (!(coverage > 0 && coverage < 1)) throw std::invalid_argument("a band's coverage is between 0 and 1");
  return size_t(std::ceil(2 / (1 - coverage) - 1e-9));
}

std::optional<ErrorBand> error_band(const std::vector<double>& residuals_pct, const std::string& gpu,
                                    double coverage) {
  if (residuals_pct.size() < minimum_band_runs(coverage)) return std::nullopt;
  std::vector<double> offsets;  // measured relative to predicted, in percent
  for (double e : residuals_pct) offsets.push_back(100.0 * (1.0 / (1.0 + e / 100.0) - 1.0));
  ErrorBand band;
  band.gpu = gpu;
  band.runs = int(residuals_pct.size());
  band.coverage = coverage;
  band.low_pct = quantile(offsets, (1 - coverage) / 2);
  band.high_pct = quantile(offsets, (1 + coverage) / 2);
  return band;
}

std::pair<double, double> band_limits(const ErrorBand& band, double predicted_s) {
  return {predicted_s * (1 + band.low_pct / 100), predicted_s * (1 + band.high_pct / 100)};
}

std::string band_text(const ErrorBand& band) {
  char text[160];
  std::snprintf(text, sizeof text, "%+.0f%% / %+.0f%%: %.0f%% of %d published %s runs", band.low_pct,
                band.high_pct, 100 * band.coverage, band.runs, band.gpu.c_str());
  return text;
}

}  // namespace axo
