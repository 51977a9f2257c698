// The picture of the searched space: its Pareto front by hand, and
// well-formed SVG with the axes, the labels and every spot drawn.
#include "planner/space_plot.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "model/presets.h"
#include "tests/report/svg_check.h"

namespace axo {
namespace {

constexpr double GiB = double(1ull << 30);

TEST(SpacePlot, ParetoFrontByHand) {
  // (time s, memory GiB): (3, 10) and (2, 20) and (1, 40) are each best for
  // their memory; (3, 30) is beaten by (2, 20); (2.5, 20) by (2, 20).
  const std::vector<SpacePoint> points = {{3, 30 * GiB}, {1, 40 * GiB}, {2.5, 20 * GiB},
                                          {3, 10 * GiB}, {2, 20 * GiB}};
  const std::vector<SpacePoint> front = pareto_front(points);
  ASSERT_EQ(front.size(), 3u);
  EXPECT_EQ(front[0].iter_time, 3);
  EXPECT_EQ(front[0].memory_bytes, 10 * GiB);
  EXPECT_EQ(front[1].iter_time, 2);
  EXPECT_EQ(front[2].iter_time, 1);
  EXPECT_EQ(front[2].memory_bytes, 40 * GiB);
}

TEST(SpacePlot, WellFormedWithAxesAndRanks) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  SearchOptions options;
  options.gpus = 32;
  options.prune = false;
  options.record_points = true;
  const SearchResult result = search(model, options);
  const std::string svg = space_plot_svg(result.points, result.best, model.machine().usable_memory_bytes(),
                                         "gpt3-13b on 32 x selene");
  const testing::SvgCheck check = testing::check_svg(svg);
  ASSERT_TRUE(check.well_formed) << check.error;
  EXPECT_EQ(check.root, "svg");
  for (const char* text : {"memory per GPU (GiB)", "iteration time (s)", "gpt3-13b on 32 x selene",
                           "Pareto front", "10"}) {
    EXPECT_NE(check.text.find(text), std::string::npos) << text;
  }
  EXPECT_GT(check.elements.size(), 1u);
  EXPECT_LT(svg.size(), 8u << 20) << "points on the same spot are drawn once";
  EXPECT_THROW(space_plot_svg({}, {}, 1, "empty"), InputError);
}

}  // namespace
}  // namespace axo
