// The comparison of one plan with one run as CSV, one row per component and
// a last row "total":
//   component,predicted_s,measured_s,error_s,error_pct
// error_pct is "n/a" where the prediction is zero (see comparison.h).
#pragma once

#include <string>

#include "report/comparison.h"

namespace axo {

std::string comparison_csv(const Comparison& comparison);
// Writes atomically (write_file_atomically).
void write_comparison_csv(const Comparison& comparison, const std::string& path);

}  // namespace axo
