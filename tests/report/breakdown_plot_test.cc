// The stacked-bar chart of one comparison: well-formed SVG with a bar
// segment per non-zero component and the legend's names.
#include "report/breakdown_plot.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/report/report_test_files.h"
#include "tests/report/svg_check.h"

namespace axo {
namespace {

Comparison example() {
  MeasuredRun measured;
  measured.components = {1.5, 0.2, 0.1, 0, 0, 0, 0.5};
  measured.iteration_s = 2.3;
  return compare(testing::breakdown_of(1.0, 0.1, 0, 0, 0, 0, 0.5), measured);
}

TEST(BreakdownPlot, WellFormedWithLegend) {
  const std::string svg = breakdown_plot_svg(example(), "gpt2-tiny on 1 GPU");
  const testing::SvgCheck check = testing::check_svg(svg);
  ASSERT_TRUE(check.well_formed) << check.error;
  EXPECT_EQ(check.root, "svg");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(svg.substr(svg.find_last_not_of("\n") - 5, 6), "</svg>");
  for (const char* name : {"compute", "tp_comm", "optimizer", "predicted", "measured", "gpt2-tiny on 1 GPU",
                           "seconds per iteration"}) {
    EXPECT_NE(check.text.find(name), std::string::npos) << name;
  }
}

TEST(BreakdownPlot, ZeroTimesStillMakeAChart) {
  const Comparison empty = compare(Breakdown{}, MeasuredRun{});
  EXPECT_TRUE(testing::check_svg(breakdown_plot_svg(empty, "")).well_formed);
}

TEST(BreakdownPlot, WritesTheFile) {
  const testing::TemporaryFolder folder("breakdown_plot");
  write_breakdown_plot(example(), "t", folder.file("cost.svg"));
  std::ifstream in(folder.file("cost.svg"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(testing::check_svg(text.str()).well_formed);
}

}  // namespace
}  // namespace axo
