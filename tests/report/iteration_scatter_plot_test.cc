// Predicted against measured iteration time: well-formed SVG with numbered points.
#include "report/iteration_scatter_plot.h"

#include <gtest/gtest.h>

#include "tests/report/svg_check.h"

namespace axo {
namespace {

TEST(IterationScatterPlot, WellFormedWithNumberedPoints) {
  const RunSetSummary s = summarize_run_set({{"a", 2.0, 3.0}, {"b", 1.0, 2.1}, {"c", 1.5, 2.0}});
  const std::string svg = iteration_scatter_svg(s);
  const testing::SvgCheck check = testing::check_svg(svg);
  ASSERT_TRUE(check.well_formed) << check.error;
  EXPECT_EQ(check.root, "svg");
  EXPECT_NE(check.text.find("predicted iteration time (s)"), std::string::npos) << check.text;
  EXPECT_NE(check.text.find("measured iteration time (s)"), std::string::npos);
  const RunSetSummary fast = summarize_run_set({{"a", 0.02, 0.03}, {"b", 0.01, 0.02}});
  EXPECT_NE(testing::check_svg(iteration_scatter_svg(fast)).text.find("measured iteration time (ms)"),
            std::string::npos);
  for (const char* number : {"1", "2", "3"}) EXPECT_NE(check.text.find(number), std::string::npos);
}

}  // namespace
}  // namespace axo
