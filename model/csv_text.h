// CSV text through libcsv: one line of cells, quoted where a cell needs it,
// the number format every report CSV uses, and the one reading of CSV input
// (the validation corpus, a plan table).
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

// A CSV text's records, the header first, each with the line of the text it ends on (a quoted cell
// may hold line breaks; blank lines are skipped).
struct CsvRecords {
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> lines;
};
// `text` read strictly (RFC 4180 quoting), a UTF-8 byte-order mark at its start skipped (spreadsheets
// write one). InputError naming `path` and the line: malformed CSV, no header line, or a header
// naming a column twice (which cell a reader took would be the order of its search).
CsvRecords parse_csv(const std::string& text, const std::string& path);

}  // namespace axo
