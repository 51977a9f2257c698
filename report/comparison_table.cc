// The comparison as a table for people (see comparison_table.h).
#include "report/comparison_table.h"

#include <cstdio>

namespace axo {

std::string percent_text(const std::optional<double>& percent) {
  char text[32] = "n/a";
  if (percent) std::snprintf(text, sizeof text, "%+.1f", *percent);
  return text;
}

std::string comparison_table(const Comparison& comparison) {
  std::string text;
  char line[160];
  std::snprintf(line, sizeof line, "%-10s %12s %12s %12s %8s\n", "component", "predicted_s",
                "measured_s", "error_s", "error_%");
  text += line;
  for (const ComparisonRow& row : comparison.rows) {
    std::snprintf(line, sizeof line, "%-10s %12.4f %12.4f %+12.4f %8s\n", row.component.c_str(),
                  row.predicted_s, row.measured_s, row.error_s, percent_text(row.error_pct).c_str());
    text += line;
  }
  return text;
}

}  // namespace axo
