// `axo plan --svg`: the searched space as a PLplot SVG chart. Every costed
// configuration is a point, memory per GPU across and iteration time up (a
// log scale: the space spans orders of magnitude); the Pareto front (the
// configurations no other beats on both time and memory) is a line; the top
// rows of the ranked table are labelled with their rank; the usable memory
// per GPU is a dashed line when it is within twice the points' largest.
// Points that fall on the same spot of the chart (a 100 × 100 grid over the
// axes, about a symbol's width) are drawn once, so the file stays small for
// searches of millions of configurations.
#pragma once

#include <string>
#include <vector>

#include "planner/search.h"

namespace axo {

// The points no other point beats on both coordinates (smaller or equal on
// both, smaller on one), by increasing memory (and so decreasing time).
std::vector<SpacePoint> pareto_front(const std::vector<SpacePoint>& points);

// `labelled`: the rows to label, rank 1 first. Throws InputError when there
// are no points (nothing fits).
std::string space_plot_svg(const std::vector<SpacePoint>& points, const std::vector<PlanRow>& labelled,
                           double capacity_bytes, const std::string& title);
// Writes atomically (write_file_atomically).
void write_space_plot(const std::vector<SpacePoint>& points, const std::vector<PlanRow>& labelled,
                      double capacity_bytes, const std::string& title, const std::string& path);

}  // namespace axo
