// CSV text through libcsv (see csv_text.h).
#include "report/csv_text.h"

#include <csv.h>

#include <cstdio>

namespace axo {

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    const std::string& cell = cells[i];
    if (cell.find_first_of(",\"\r\n") == std::string::npos) {
      line += cell;
      continue;
    }
    std::string quoted(cell.size() * 2 + 2, '\0');  // csv_write's worst case
    quoted.resize(csv_write(quoted.data(), quoted.size(), cell.data(), cell.size()));
    line += quoted;
  }
  return line + "\n";
}

std::string csv_number(std::optional<double> value) {
  if (!value) return "n/a";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", *value);
  return buffer;
}

}  // namespace axo
