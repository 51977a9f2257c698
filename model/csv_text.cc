// CSV text through libcsv (see csv_text.h).
#include "model/csv_text.h"

#include <csv.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "model/error.h"

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

namespace {

// Collects libcsv's fields and records, each record with the line it ends on.
struct RecordCollector {
  CsvRecords records;
  std::vector<std::string> current;
  size_t line = 1;          // the line libcsv is reading
  size_t record_start = 1;  // the line the record being read starts on (a quoted cell may span lines)
  static void field(void* data, size_t size, void* self) {
    static_cast<RecordCollector*>(self)->current.emplace_back(static_cast<char*>(data), size);
  }
  static void record(int, void* self) {
    auto* collector = static_cast<RecordCollector*>(self);
    collector->records.rows.push_back(std::move(collector->current));
    collector->records.lines.push_back(collector->line);
    collector->current.clear();
    collector->record_start = collector->line + 1;  // a record ends at its line's break
  }
};

// The header names each column, once: which cell a reader took of two would be its search order's.
void check_header(const CsvRecords& records, const std::string& path) {
  if (records.rows.empty()) throw InputError(path + ": empty table (no header line)");
  std::set<std::string> seen;
  const std::vector<std::string>& header = records.rows.front();
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& name = header[i];
    if (name.empty()) {
      throw InputError(path + ":" + std::to_string(records.lines.front()) + ": column " + std::to_string(i + 1) +
                       " has no name in the header");
    }
    if (!seen.insert(name).second) {
      throw InputError(path + ":" + std::to_string(records.lines.front()) + ": column '" + name +
                       "' named twice in the header");
    }
  }
}

}  // namespace

CsvRecords parse_csv(const std::string& text, const std::string& path) {
  csv_parser parser;
  // CSV_STRICT_FINI: a quote still open at the end is an error, not the rest of the file as one cell.
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
    throw std::runtime_error("libcsv: init failed");
  }
  RecordCollector collector;
  const std::string_view bom = "\xEF\xBB\xBF";
  size_t parsed = text.starts_with(bom) ? bom.size() : 0;
  bool ok = true;
  while (ok && parsed < text.size()) {  // a line at a time, so that each record knows its line
    const size_t end = std::min(text.find('\n', parsed), text.size() - 1) + 1;
    const size_t used = csv_parse(&parser, text.data() + parsed, end - parsed, RecordCollector::field,
                                  RecordCollector::record, &collector);
    ok = used == end - parsed;
    parsed += used;
    if (ok && text[end - 1] == '\n') ++collector.line;  // a last line without one ends its record at csv_fini
  }
  const bool read_through = ok;
  ok = ok && csv_fini(&parser, RecordCollector::field, RecordCollector::record, &collector) == 0;
  const std::string error = csv_strerror(csv_error(&parser));
  csv_free(&parser);
  if (!ok) {
    // At the end: a quote left open, at the line its record starts on. Within the file: a quote in
    // a cell not quoted whole, at its line, naming the record's first line where a quote opened
    // before spans lines to it.
    if (read_through) {
      throw InputError(path + ":" + std::to_string(collector.record_start) +
                       ": malformed CSV: a quoted cell left open (its closing quote never comes)");
    }
    const std::string spans = collector.record_start < collector.line
                                  ? " (in the record from line " + std::to_string(collector.record_start) +
                                        ": a quote opened there may be left open)"
                                  : "";
    throw InputError(path + ":" + std::to_string(collector.line) + ": malformed CSV: a stray quote (a cell is quoted "
                     "whole, a quote inside it doubled: \"\")" + spans + " [libcsv: " + error + "]");
  }
  check_header(collector.records, path);
  return std::move(collector.records);
}

}  // namespace axo
