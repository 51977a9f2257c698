// The comparison of one plan with one run as a table for people:
//
//   component   predicted_s  measured_s    error_s  error_%
//   compute          1.2000      1.3100     0.1100     +9.2
//   tp_comm          0.0000      0.0000     0.0000      n/a
//   ...
//   total            1.5000      1.6200     0.1200     +8.0
#pragma once

#include <optional>
#include <string>

#include "report/comparison.h"

namespace axo {

std::string comparison_table(const Comparison& comparison);
// An error percentage as the tables print it: "+9.2", or "n/a" for none.
std::string percent_text(const std::optional<double>& percent);

}  // namespace axo
