// The searched space as an SVG chart (see space_plot.h).
#include "planner/space_plot.h"

#include <plplot.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "model/error.h"
#include "model/atomic_file.h"
#include "plot/plplot_svg.h"

namespace axo {

namespace {

constexpr double GiB = double(1ull << 30);
constexpr int kGrid = 100;  // distinct spots per axis: about a symbol's width

struct Axes {
  double memory_max = 0;     // GiB
  double log_time_min = 0;   // log10(seconds)
  double log_time_max = 0;
};

Axes axes_for(const std::vector<SpacePoint>& points, double capacity_bytes) {
  Axes a;
  double time_min = points.front().iter_time, time_max = time_min;
  for (const SpacePoint& p : points) {
    a.memory_max = std::max(a.memory_max, p.memory_bytes / GiB);
    time_min = std::min(time_min, p.iter_time);
    time_max = std::max(time_max, p.iter_time);
  }
  // The usable memory widens the axis when it is near the points (within 2x), not for a tiny model.
  const double capacity = capacity_bytes / GiB;
  a.memory_max = 1.05 * (capacity < 2 * a.memory_max ? std::max(a.memory_max, capacity) : a.memory_max);
  a.log_time_min = std::floor(std::log10(time_min));
  a.log_time_max = std::max(std::ceil(std::log10(time_max)), a.log_time_min + 1);
  return a;
}

// One point per occupied spot of the chart, in chart coordinates (GiB, log10 s).
void chart_points(const std::vector<SpacePoint>& points, const Axes& a, std::vector<PLFLT>& x,
                  std::vector<PLFLT>& y) {
  std::set<std::pair<int, int>> drawn;
  const double span = a.log_time_max - a.log_time_min;
  for (const SpacePoint& p : points) {
    const double gib = p.memory_bytes / GiB, log_time = std::log10(p.iter_time);
    const std::pair<int, int> spot{int(gib / a.memory_max * kGrid), int((log_time - a.log_time_min) / span * kGrid)};
    if (!drawn.insert(spot).second) continue;
    x.push_back(gib);
    y.push_back(log_time);
  }
}

void draw_front(const std::vector<SpacePoint>& front) {
  std::vector<PLFLT> x, y;
  for (const SpacePoint& p : front) {
    x.push_back(p.memory_bytes / GiB);
    y.push_back(std::log10(p.iter_time));
  }
  plcol0(kPlotFirstSeries + 3);
  plwidth(2);
  plline(PLINT(x.size()), x.data(), y.data());
  plwidth(1);
}

void draw_labels(const std::vector<PlanRow>& labelled, const Axes& a) {
  plcol0(kPlotInk);
  plssym(0.0, 1.5);
  for (size_t i = 0; i < labelled.size(); ++i) {
    PLFLT x = labelled[i].breakdown.memory.total() / GiB, y = std::log10(labelled[i].breakdown.iter_time);
    plpoin(1, &x, &y, 4);  // an open circle round the point
    // Above it, in three staggered rows: the best plans often sit close together.
    const double above = (0.04 + 0.035 * double(i % 3)) * (a.log_time_max - a.log_time_min);
    const std::string rank = std::to_string(i + 1);
    plptex(x, y + above, 1.0, 0.0, 0.5, rank.c_str());
  }
}

}  // namespace

std::vector<SpacePoint> pareto_front(const std::vector<SpacePoint>& points) {
  std::vector<SpacePoint> sorted = points;
  std::sort(sorted.begin(), sorted.end(), [](const SpacePoint& a, const SpacePoint& b) {
    return a.memory_bytes != b.memory_bytes ? a.memory_bytes < b.memory_bytes : a.iter_time < b.iter_time;
  });
  std::vector<SpacePoint> front;
  for (const SpacePoint& p : sorted) {
    if (front.empty() || p.iter_time < front.back().iter_time) front.push_back(p);
  }
  return front;
}

std::string space_plot_svg(const std::vector<SpacePoint>& points, const std::vector<PlanRow>& labelled,
                           double capacity_bytes, const std::string& title) {
  if (points.empty()) throw InputError("--svg: no configuration fits, so there is nothing to draw");
  const Axes a = axes_for(points, capacity_bytes);
  std::vector<PLFLT> x, y;
  chart_points(points, a, x, y);
  const std::vector<SpacePoint> front = pareto_front(points);
  return render_svg(720, 540, [&] {
    plcol0(kPlotInk);
    plenv(0.0, a.memory_max, a.log_time_min, a.log_time_max, 0, 20);  // log y axis
    pllab("memory per GPU (GiB)", "iteration time (s)", title.c_str());
    const bool capacity_shown = capacity_bytes / GiB <= a.memory_max;
    if (capacity_shown) {
      PLFLT cap_x[2] = {capacity_bytes / GiB, capacity_bytes / GiB};
      PLFLT cap_y[2] = {a.log_time_min, a.log_time_max};
      plcol0(kPlotGuide);
      pllsty(2);  // dashed: the usable memory
      plline(2, cap_x, cap_y);
      pllsty(1);
    }
    plcol0(kPlotFirstSeries);
    plssym(0.0, 0.6);
    plpoin(PLINT(x.size()), x.data(), y.data(), 17);  // filled circles
    draw_front(front);
    draw_labels(labelled, a);
    plcol0(kPlotInk);
    plschr(0, 0.6);
    plmtex("t", 0.6, 0.5, 0.5,
           (std::to_string(points.size()) + " configurations; line: Pareto front" +
            (capacity_shown ? "; dashed: usable memory" : "")).c_str());
    plschr(0, 1.0);
  });
}

void write_space_plot(const std::vector<SpacePoint>& points, const std::vector<PlanRow>& labelled,
                      double capacity_bytes, const std::string& title, const std::string& path) {
  write_file_atomically(path, space_plot_svg(points, labelled, capacity_bytes, title));
}

}  // namespace axo
