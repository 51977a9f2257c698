// Predicted against measured: absolute and relative errors, n/a for a zero
// prediction, and the total against the mean measured iteration.
#include "report/comparison.h"

#include <gtest/gtest.h>

#include "tests/report/report_test_files.h"

namespace axo {
namespace {

TEST(Comparison, ErrorsPerComponentAndTotal) {
  const Breakdown predicted = testing::breakdown_of(2.0, 0.5, 0, 0, 0.25, 0, 0.25);  // 3.0 s
  MeasuredRun measured;
  measured.components = {2.5, 0.25, 0.1, 0, 0.25, 0, 0.2};
  measured.iteration_s = 3.5;
  const Comparison c = compare(predicted, measured);
  ASSERT_EQ(c.rows.size(), 8u);
  EXPECT_EQ(c.rows[0].component, "compute");
  EXPECT_DOUBLE_EQ(c.rows[0].error_s, 0.5);
  EXPECT_DOUBLE_EQ(*c.rows[0].error_pct, 25.0);
  EXPECT_DOUBLE_EQ(*c.rows[1].error_pct, -50.0);
  EXPECT_EQ(c.rows[2].component, "bubble");
  EXPECT_DOUBLE_EQ(c.rows[2].error_s, 0.1);
  EXPECT_FALSE(c.rows[2].error_pct.has_value());  // predicted 0: n/a, not inf
  EXPECT_FALSE(c.rows[3].error_pct.has_value());
  EXPECT_DOUBLE_EQ(*c.rows[4].error_pct, 0.0);
  EXPECT_NEAR(*c.rows[6].error_pct, -20.0, 1e-12);
  EXPECT_EQ(c.total().component, "total");
  EXPECT_DOUBLE_EQ(c.total().predicted_s, 3.0);
  EXPECT_DOUBLE_EQ(c.total().measured_s, 3.5);
  EXPECT_NEAR(*c.total().error_pct, 100.0 / 6.0, 1e-12);
}

}  // namespace
}  // namespace axo
