// CSV text through libcsv: one line of cells, quoted where a cell needs it,
// and the number format every report CSV uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace axo {

// The cells joined by commas and ended by a newline; a cell holding a comma,
// a quote or a line break is quoted by libcsv's csv_write.
std::string csv_line(const std::vector<std::string>& cells);
// Ten significant digits ("%.10g"); "n/a" when absent.
std::string csv_number(std::optional<double> value);

}  // namespace axo
