// The error band a prediction carries: from a GPU type's leave-one-source-out
// residuals on published runs (loso_fit.h), the range in which the measured
// time fell relative to the prediction for the central `coverage` of them.
//
// A residual e = (predicted − measured)/measured means measured = predicted/(1 + e),
// so each run gives r = 1/(1 + e) − 1, the measured time's offset from the
// prediction. The band is [q_lo, q_hi] of the r, q_lo and q_hi the (1 − coverage)/2
// and (1 + coverage)/2 quantiles with linear interpolation between order
// statistics (Hyndman & Fan 1996, type 7: numpy's default). A prediction p then
// reads "p (q_lo / q_hi: coverage of N published GPU runs)", e.g.
// "17.1 s (-6% / +9%: 90% of 84 published H100-80 runs)".
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace axo {

// The share of published runs a band covers.
inline constexpr double kBandCoverage = 0.9;

struct ErrorBand {
  std::string gpu;        // the GPU type whose runs gave it
  int runs = 0;           // how many residuals
  double coverage = kBandCoverage;  // fraction of runs inside
  double low_pct = 0;     // measured − predicted, % of predicted, at the low quantile
  double high_pct = 0;    // same at the high quantile
};

// The q-quantile (0 ≤ q ≤ 1) of `values`, type 7; throws on an empty list.
double quantile(std::vector<double> values, double q);

// The fewest residuals a band of `coverage` (0 to 1, exclusive) is read from: one run beyond
// each end, 2/(1 − coverage) (20 for 90%); fewer and its ends would be the extremes themselves.
size_t minimum_band_runs(double coverage);

// The band from LOSO residuals in percent (100·(predicted − measured)/measured);
// nullopt when there are fewer than minimum_band_runs (no band: say so).
std::optional<ErrorBand> error_band(const std::vector<double>& residuals_pct, const std::string& gpu,
                                    double coverage = kBandCoverage);

// The measured time's range for a prediction of `predicted_s` seconds: {low, high}.
std::pair<double, double> band_limits(const ErrorBand& band, double predicted_s);

// "-6% / +9%: 90% of 84 published H100-80 runs".
std::string band_text(const ErrorBand& band);

}  // namespace axo
