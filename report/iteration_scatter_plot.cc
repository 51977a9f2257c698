// Predicted against measured iteration time (see iteration_scatter_plot.h).
#include "report/iteration_scatter_plot.h"

#include <plplot.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/atomic_file.h"
#include "plot/plplot_svg.h"

namespace axo {

std::string iteration_scatter_svg(const RunSetSummary& summary) {
  std::vector<PLFLT> predicted, measured;
  double top = 0;
  for (const ComparisonRow& row : summary.iterations) {
    predicted.push_back(row.predicted_s);
    measured.push_back(row.measured_s);
    top = std::max({top, row.predicted_s, row.measured_s});
  }
  if (!(top > 0)) top = 1;
  // Below a second, milliseconds read better than PLplot's "(x10^-3)" axis note.
  const double unit = top < 1 ? 1e3 : 1;
  for (PLFLT& v : predicted) v *= unit;
  for (PLFLT& v : measured) v *= unit;
  top *= 1.1 * unit;
  const std::string in = unit == 1 ? " (s)" : " (ms)";
  return render_svg(560, 560, [&] {
    plcol0(kPlotInk);
    plenv(0.0, top, 0.0, top, 1, 0);  // equal scales, so y = x is the diagonal
    pllab(("predicted iteration time" + in).c_str(), ("measured iteration time" + in).c_str(),
          "axo report: predicted vs measured");
    PLFLT diagonal_x[2] = {0.0, top}, diagonal_y[2] = {0.0, top};
    plcol0(kPlotGuide);
    pllsty(2);  // dashed
    plline(2, diagonal_x, diagonal_y);
    pllsty(1);
    plcol0(kPlotFirstSeries);
    plssym(0.0, 2.0);  // symbols twice the default size
    plpoin(PLINT(predicted.size()), predicted.data(), measured.data(), 17);  // filled circles
    plcol0(kPlotInk);
    for (size_t i = 0; i < predicted.size(); ++i) {
      const std::string number = std::to_string(i + 1);
      plptex(predicted[i] + 0.015 * top, measured[i] + 0.015 * top, 1.0, 0.0, 0.0, number.c_str());
    }
  });
}

void write_iteration_scatter(const RunSetSummary& summary, const std::string& path) {
  write_file_atomically(path, iteration_scatter_svg(summary));
}

}  // namespace axo
