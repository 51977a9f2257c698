// Error bands from leave-one-source-out residuals: quantiles by hand.
#include "planner/error_band.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

TEST(ErrorBand, QuantileInterpolatesBetweenOrderStatistics) {
  // Type 7: position q·(n − 1) in the sorted list.
  EXPECT_DOUBLE_EQ(quantile({5, 1, 4, 2, 3}, 0.05), 1.2);
  EXPECT_DOUBLE_EQ(quantile({5, 1, 4, 2, 3}, 0.95), 4.8);
  EXPECT_DOUBLE_EQ(quantile({5, 1, 4, 2, 3}, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7);
  EXPECT_THROW(quantile({}, 0.5), std::invalid_argument);
}

TEST(ErrorBand, FromResidualsToTheMeasuredTimesRange) {
  // Predicted 25% too slow: measured = predicted/1.25, 20% below it; 20% too
  // fast: measured 25% above; exact: 0. Offsets sorted: −20, 0 (eight times), +25.
  const std::vector<double> residuals{25, -20, 0, 0, 0, 0, 0, 0, 0, 0};
  const auto band = error_band(residuals, "H100-80", 0.8);
  ASSERT_TRUE(band);
  EXPECT_EQ(band->runs, 10);
  EXPECT_NEAR(band->low_pct, -20 + 0.9 * 20, 1e-9);  // quantile 0.1: position 0.9
  EXPECT_NEAR(band->high_pct, 0 + 0.1 * 25, 1e-9);   // quantile 0.9: position 8.1
  const auto [low, high] = band_limits(*band, 10.0);
  EXPECT_NEAR(low, 9.8, 1e-9);
  EXPECT_NEAR(high, 10.25, 1e-9);
  EXPECT_EQ(band_text(*band), "-2% / +2%: 80% of 10 published H100-80 runs");
}

// A band's ends must lie inside the runs, one beyond each: 2/(1 − coverage) of them, 20 for
// the default 90% (from two runs a "90%" band was their own range: -66% / -66% of 2 runs).
TEST(ErrorBand, NoBandFromTooFewResiduals) {
  EXPECT_FALSE(error_band({}, "GB200"));
  EXPECT_FALSE(error_band({3.0}, "GB200"));
  EXPECT_EQ(minimum_band_runs(0.9), 20u);
  EXPECT_EQ(minimum_band_runs(0.8), 10u);
  std::vector<double> residuals(19, 5.0);
  EXPECT_FALSE(error_band(residuals, "V100-16"));
  residuals.push_back(-5.0);
  ASSERT_TRUE(error_band(residuals, "V100-16"));
  EXPECT_DOUBLE_EQ(error_band(residuals, "V100-16")->coverage, 0.9);  // the default
}

}  // namespace
}  // namespace axo
