// The comparison as CSV (see comparison_csv.h).
#include "report/comparison_csv.h"

#include "model/atomic_file.h"
#include "model/csv_text.h"

namespace axo {

std::string comparison_csv(const Comparison& comparison) {
  std::string text = csv_line({"component", "predicted_s", "measured_s", "error_s", "error_pct"});
  for (const ComparisonRow& row : comparison.rows) {
    text += csv_line({row.component, csv_number(row.predicted_s), csv_number(row.measured_s),
                      csv_number(row.error_s), csv_number(row.error_pct)});
  }
  return text;
}

void write_comparison_csv(const Comparison& comparison, const std::string& path) {
  write_file_atomically(path, comparison_csv(comparison));
}

}  // namespace axo
