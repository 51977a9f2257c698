// Spearman's rho with average ranks for ties, on inputs worked by hand.
#include "report/rank_correlation.h"

#include <gtest/gtest.h>

#include <cmath>

namespace axo {
namespace {

TEST(RankCorrelation, AverageRanksShareTies) {
  EXPECT_EQ(average_ranks({5, 7, 7, 9}), (std::vector<double>{1, 2.5, 2.5, 4}));
  EXPECT_EQ(average_ranks({3, 1, 2}), (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(average_ranks({4, 4, 4}), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(average_ranks({2, 1, 2, 1}), (std::vector<double>{3.5, 1.5, 3.5, 1.5}));
  EXPECT_TRUE(average_ranks({}).empty());
}

TEST(RankCorrelation, PerfectAndReversedOrder) {
  EXPECT_DOUBLE_EQ(*spearman_correlation({1, 2, 3, 4}, {10, 20, 30, 1000}), 1.0);
  EXPECT_DOUBLE_EQ(*spearman_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
}

TEST(RankCorrelation, WithoutTiesMatchesTheTextbookFormula) {
  // ranks b = {2, 1, 4, 3, 5}: Σd² = 1 + 1 + 1 + 1 + 0 = 4; 1 − 6·4/(5·24) = 0.8
  EXPECT_NEAR(*spearman_correlation({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}), 0.8, 1e-12);
}

TEST(RankCorrelation, WithTies) {
  // ranks b = {1, 2, 3.5, 5, 3.5}; deviations from 3: a {−2,−1,0,1,2}, b {−2,−1,.5,2,.5}
  // cov = 8, var a = 10, var b = 9.5: rho = 8 / √95
  EXPECT_NEAR(*spearman_correlation({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 8.0 / std::sqrt(95.0), 1e-12);
}

TEST(RankCorrelation, UndefinedCases) {
  EXPECT_FALSE(spearman_correlation({1}, {2}).has_value());
  EXPECT_FALSE(spearman_correlation({1, 2}, {1, 2, 3}).has_value());
  EXPECT_FALSE(spearman_correlation({1, 2, 3}, {7, 7, 7}).has_value());
}

}  // namespace
}  // namespace axo
