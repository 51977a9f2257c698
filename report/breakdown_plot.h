// The comparison of one plan with one run as an SVG chart (PLplot): two
// stacked bars, predicted and measured, each split into the seven
// components of kComponentNames in one colour each, with a legend.
#pragma once

#include <string>

#include "report/comparison.h"

namespace axo {

std::string breakdown_plot_svg(const Comparison& comparison, const std::string& title);
// Writes atomically (write_file_atomically).
void write_breakdown_plot(const Comparison& comparison, const std::string& title,
                          const std::string& path);

}  // namespace axo
