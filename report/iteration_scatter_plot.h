// Several plans with their runs as an SVG chart (PLplot): predicted against
// measured iteration time, one numbered point per run (numbers as in the
// report's lines), and the line y = x where a perfect model puts them all.
#pragma once

#include <string>

#include "report/run_set.h"

namespace axo {

std::string iteration_scatter_svg(const RunSetSummary& summary);
// Writes atomically (write_file_atomically).
void write_iteration_scatter(const RunSetSummary& summary, const std::string& path);

}  // namespace axo
