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
  // fast: measured 25% above; exact: 0. Offsets sorted: −20, 0, +25.
  const auto band = error_band({25, -20, 0}, "H100-80", 0.8);
  ASSERT_TRUE(band);
  EXPECT_EQ(band->runs, 3);
  EXPECT_NEAR(band->low_pct, -20 + 0.2 * 20, 1e-9);  // quantile 0.1: position 0.2
  EXPECT_NEAR(band->high_pct, 0 + 0.8 * 25, 1e-9);   // quantile 0.9: position 1.8
  const auto [low, high] = band_limits(*band, 10.0);
  EXPECT_NEAR(low, 8.4, 1e-9);
  EXPECT_NEAR(high, 12.0, 1e-9);
  EXPECT_EQ(band_text(*band), "-16% / +20%: 80% of 3 published H100-80 runs");
  EXPECT_DOUBLE_EQ(error_band({25, -20, 0}, "H100-80")->coverage, 0.9);  // the default
}

TEST(ErrorBand, NoBandWithoutResiduals) {
  EXPECT_FALSE(error_band({}, "GB200"));
  EXPECT_FALSE(error_band({3.0}, "GB200"));
}

}  // namespace
}  // namespace axo
