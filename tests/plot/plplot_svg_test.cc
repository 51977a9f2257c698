// Drawing with PLplot's svg device into a string: complete SVG every time,
// streams released, and a failing drawing leaves PLplot usable.
#include "plot/plplot_svg.h"

#include <gtest/gtest.h>
#include <plplot.h>

#include <stdexcept>

#include "tests/report/svg_check.h"

namespace axo {
namespace {

void draw_axes() { plenv(0, 1, 0, 1, 0, 0); }

TEST(PlplotSvg, RendersWellFormedSvg) {
  const std::string svg = render_svg(400, 300, draw_axes);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  const testing::SvgCheck check = testing::check_svg(svg);
  EXPECT_TRUE(check.well_formed) << check.error;
  EXPECT_EQ(check.root, "svg");
  EXPECT_NE(svg.find("viewBox=\"0 0 400 300\""), std::string::npos);
}

TEST(PlplotSvg, ReleasesStreams) {
  // PLplot has 100 streams; each drawing must give its own back.
  for (int i = 0; i < 120; ++i) ASSERT_TRUE(testing::check_svg(render_svg(100, 100, draw_axes)).well_formed);
}

TEST(PlplotSvg, AFailingDrawingIsRethrownAndPlplotStaysUsable) {
  EXPECT_THROW(render_svg(100, 100, [] { throw std::logic_error("no data"); }), std::logic_error);
  EXPECT_TRUE(testing::check_svg(render_svg(100, 100, draw_axes)).well_formed);
}

}  // namespace
}  // namespace axo
