// Stacked bars of predicted and measured components (see breakdown_plot.h).
#include "report/breakdown_plot.h"

#include <plplot.h>

#include <algorithm>
#include <vector>

#include "model/atomic_file.h"
#include "plot/plplot_svg.h"

namespace axo {

namespace {

// One stacked bar centred at x, segments bottom-up in component order.
void draw_stacked_bar(double x, const std::vector<double>& segments) {
  constexpr double half_width = 0.3;
  double bottom = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i] <= 0) continue;
    const double top = bottom + segments[i];
    PLFLT xs[4] = {x - half_width, x + half_width, x + half_width, x - half_width};
    PLFLT ys[4] = {bottom, bottom, top, top};
    plcol0(kPlotFirstSeries + int(i));
    plfill(4, xs, ys);
    plcol0(kPlotInk);
    plline(4, xs, ys);
    bottom = top;
  }
}

void draw_legend() {
  const size_t n = kComponentNames.size();
  std::vector<PLINT> options(n, PL_LEGEND_COLOR_BOX), text_colors(n, kPlotInk), box_colors(n),
      box_patterns(n, 0);
  std::vector<PLFLT> box_scales(n, 0.8), box_line_widths(n, 1.0);
  std::vector<const char*> names(kComponentNames.begin(), kComponentNames.end());
  for (size_t i = 0; i < n; ++i) box_colors[i] = kPlotFirstSeries + PLINT(i);
  PLFLT width = 0, height = 0;
  pllegend(&width, &height, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.02, 0.0, 0.1, kPlotBackground, kPlotInk, 1,
           0, 0, PLINT(n), options.data(), 1.0, 0.9, 2.0, 0.0, text_colors.data(), names.data(),
           box_colors.data(), box_patterns.data(), box_scales.data(), box_line_widths.data(),
           nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
}

}  // namespace

std::string breakdown_plot_svg(const Comparison& comparison, const std::string& title) {
  std::vector<double> predicted, measured;
  for (size_t i = 0; i < kComponentNames.size(); ++i) {
    predicted.push_back(comparison.rows[i].predicted_s);
    measured.push_back(comparison.rows[i].measured_s);
  }
  double top = 0;
  for (const auto* bar : {&predicted, &measured}) {
    double sum = 0;
    for (double v : *bar) sum += std::max(v, 0.0);
    top = std::max(top, sum);
  }
  if (!(top > 0)) top = 1;  // nothing to stack: an empty but valid chart
  // Below a second, milliseconds read better than PLplot's "(x10^-3)" axis note.
  const double unit = top < 1 ? 1e3 : 1;
  for (auto* bar : {&predicted, &measured}) {
    for (double& v : *bar) v *= unit;
  }
  top *= unit;
  return render_svg(720, 480, [&] {
    pladv(0);
    plvpor(0.12, 0.68, 0.12, 0.9);
    plwind(0.4, 2.6, 0.0, 1.1 * top);
    plcol0(kPlotInk);
    plbox("bc", 0, 0, "bcnstv", 0, 0);
    draw_stacked_bar(1.0, predicted);
    draw_stacked_bar(2.0, measured);
    plcol0(kPlotInk);
    plmtex("b", 1.5, (1.0 - 0.4) / 2.2, 0.5, "predicted");
    plmtex("b", 1.5, (2.0 - 0.4) / 2.2, 0.5, "measured");
    plmtex("l", 5.0, 0.5, 0.5, unit == 1 ? "seconds per iteration" : "milliseconds per iteration");
    plmtex("t", 1.5, 0.5, 0.5, title.c_str());
    draw_legend();
  });
}

void write_breakdown_plot(const Comparison& comparison, const std::string& title,
                          const std::string& path) {
  write_file_atomically(path, breakdown_plot_svg(comparison, title));
}

}  // namespace axo
