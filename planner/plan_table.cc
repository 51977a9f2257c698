// The ranked configurations printed, as CSV and as JSON (see plan_table.h).
#include "planner/plan_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "model/atomic_file.h"
#include "model/config_fields.h"
#include "model/csv_text.h"
#include "model/error.h"
#include "model/input_file.h"
#include "planner/row_folding.h"

namespace axo {

namespace {

constexpr double GiB = double(1ull << 30);

// A column of results: a number (or yes/no, or text) out of a row.
//
// Adding an output column (train_days, goodput, an error band ...) is one
// entry in later_results(): the CSV, the JSON and (with a header) the
// printed table take it from there, and reading a table back fills it in.
struct ResultColumn {
  std::string name;      // the CSV and JSON column
  bool boolean = false;  // true/false in CSV and JSON, yes/no printed
  std::function<double(const PlanRow&)> get;
  std::function<void(PlanRow&, double)> set = {};  // empty: derived, not read back
  // The printed table: its header (empty: not printed), width and decimals,
  // and whether a rule "|" comes before it; 'g' prints %g (cost, GPU-hours).
  std::string header = {};
  int width = 0;
  int decimals = 0;
  bool rule_before = false;
  char conversion = 'f';
  // Empty: every row has it. Else a row without it leaves it out of the
  // JSON, and a table whose first row lacks it has no such column.
  std::function<bool(const PlanRow&)> present = {};
  bool in_every_csv = false;  // an optional column every CSV has, empty where the row lacks it
  bool may_be_infinite = false;  // JSON writes infinity as null: null reads back as infinity
  // A text column (get unused): left-aligned, printed as wide as its widest cell.
  std::function<std::string(const PlanRow&)> text = {};

  bool in(const PlanRow& row) const { return !present || present(row); }
};

// The seconds of component `index` of kComponentNames (t_compute_s, ...).
ResultColumn component_column(size_t index, const char* header) {
  return {.name = std::string("t_") + kComponentNames[index] + "_s",
          .get = [index](const PlanRow& row) { return components(row.breakdown)[index]; },
          .set = [index](PlanRow& row, double value) {
            Breakdown& b = row.breakdown;
            double* fields[] = {&b.compute, &b.tp_comm, &b.bubble, &b.pp_comm,
                                &b.dp_comm, &b.offload, &b.optimizer};
            *fields[index] = value;
          },
          .header = header, .width = 8, .decimals = 4, .rule_before = index == 0};
}

// GiB per device of one kind of memory (mem_weights_gib, ...).
ResultColumn memory_column(const char* name, double MemoryBreakdown::*kind) {
  return {.name = name,
          .get = [kind](const PlanRow& row) { return row.breakdown.memory.*kind / GiB; },
          .set = [kind](PlanRow& row, double value) { row.breakdown.memory.*kind = value * GiB; }};
}

// The results of the table's first layout, after the configuration's fields:
// iteration time, rate, memory, fits, then each component's seconds.
const std::vector<ResultColumn>& first_results() {
  static const std::vector<ResultColumn> columns = {
      {.name = "iter_time_s", .get = [](const PlanRow& r) { return r.breakdown.iter_time; },
       .set = [](PlanRow& r, double v) { r.breakdown.iter_time = v; },
       .header = "iter_s", .width = 9, .decimals = 4},
      {.name = "tflops_per_gpu", .get = [](const PlanRow& r) { return r.breakdown.tflops_per_gpu; },
       .set = [](PlanRow& r, double v) { r.breakdown.tflops_per_gpu = v; },
       .header = "TF/GPU", .width = 7, .decimals = 1},
      {.name = "pct_peak", .get = [](const PlanRow& r) { return r.breakdown.pct_peak; },
       .set = [](PlanRow& r, double v) { r.breakdown.pct_peak = v; },
       .header = "%peak", .width = 6, .decimals = 1},
      {.name = "mem_gib_per_gpu", .get = [](const PlanRow& r) { return r.breakdown.memory.total() / GiB; },
       .header = "mem_GiB", .width = 7, .decimals = 2},
      {.name = "fits", .boolean = true, .get = [](const PlanRow& r) { return double(r.breakdown.fits); },
       .set = [](PlanRow& r, double v) { r.breakdown.fits = v != 0; },
       .header = "fits", .width = 4},
      component_column(0, "compute"),
      component_column(1, "tp_comm"),
      component_column(2, "bubble"),
      component_column(3, "pp_comm"),
      component_column(4, "dp_comm"),
      component_column(5, "offload"),
      component_column(6, "optim"),
  };
  return columns;
}

// Results added later, after the fields added later: new columns go last.
const std::vector<ResultColumn>& later_results() {
  static const std::vector<ResultColumn> columns = {
      memory_column("mem_weights_gib", &MemoryBreakdown::weights),
      memory_column("mem_gradients_gib", &MemoryBreakdown::gradients),
      memory_column("mem_optimizer_gib", &MemoryBreakdown::optimizer),
      memory_column("mem_activations_gib", &MemoryBreakdown::activations),
      memory_column("mem_buffers_gib", &MemoryBreakdown::comm_buffers),
      {.name = "mem_capacity_gib", .get = [](const PlanRow& r) { return r.breakdown.memory_capacity / GiB; },
       .set = [](PlanRow& r, double v) { r.breakdown.memory_capacity = v * GiB; }},
      // The error band of the GPU type (prediction_band.h): where the measured time falls. Its
      // columns are in every CSV, empty on a GPU type without a band, so a machine's CSV has the same
      // columns as another's.
      {.name = "iter_time_low_s", .get = [](const PlanRow& r) { return r.band->low_s; },
       .set = [](PlanRow& r, double v) { r.band = IterationBand{v, r.band ? r.band->high_s : 0}; },
       .header = "low_s", .width = 9, .decimals = 4, .rule_before = true,
       .present = [](const PlanRow& r) { return r.band.has_value(); }, .in_every_csv = true},
      {.name = "iter_time_high_s", .get = [](const PlanRow& r) { return r.band->high_s; },
       .set = [](PlanRow& r, double v) { r.band = IterationBand{r.band ? r.band->low_s : 0, v}; },
       .header = "high_s", .width = 9, .decimals = 4,
       .present = [](const PlanRow& r) { return r.band.has_value(); }, .in_every_csv = true},
      // Failures and checkpoints (model/goodput.h).
      {.name = "goodput", .get = [](const PlanRow& r) { return r.training.goodput.goodput; },
       .set = [](PlanRow& r, double v) { r.training.goodput.goodput = v; },
       .header = "goodput", .width = 7, .decimals = 4, .rule_before = true},
      {.name = "checkpoint_interval_s",
       .get = [](const PlanRow& r) { return r.training.goodput.checkpoint_interval_s; },
       .set = [](PlanRow& r, double v) { r.training.goodput.checkpoint_interval_s = v; },
       .header = "ckpt_s", .width = 7, .decimals = 0},
      // With --tokens (and --gpu-hour-price): infinite when the goodput is 0.
      {.name = "train_days", .get = [](const PlanRow& r) { return r.training.time.train_days; },
       .set = [](PlanRow& r, double v) { r.training.has_time = true, r.training.time.train_days = v; },
       .header = "days", .width = 9, .decimals = 2,
       .present = [](const PlanRow& r) { return r.training.has_time; }, .may_be_infinite = true},
      {.name = "gpu_hours", .get = [](const PlanRow& r) { return r.training.time.gpu_hours; },
       .set = [](PlanRow& r, double v) { r.training.has_time = true, r.training.time.gpu_hours = v; },
       .header = "GPU_hours", .width = 10, .decimals = 4, .conversion = 'g',
       .present = [](const PlanRow& r) { return r.training.has_time; }, .may_be_infinite = true},
      {.name = "cost", .get = [](const PlanRow& r) { return r.training.time.cost; },
       .set = [](PlanRow& r, double v) { r.training.has_cost = true, r.training.time.cost = v; },
       .header = "cost", .width = 10, .decimals = 4, .conversion = 'g',
       .present = [](const PlanRow& r) { return r.training.has_cost; }, .may_be_infinite = true},
      // The configurations folded into the row (row_folding.h): not read back.
      {.name = "variants", .get = {}, .header = "variants (same numbers)",
       .text = [](const PlanRow& r) { return variants_text(r.config, r.same_numbers); }},
  };
  return columns;
}

// One CSV/JSON column: the rank, a configuration field or a result.
struct Column {
  std::string name;
  const ConfigField* field = nullptr;
  const ResultColumn* result = nullptr;
};

// The rank, the fields of the first layout, the first results, the fields
// added later (late_column), the later results.
const std::vector<Column>& columns() {
  static const std::vector<Column> list = [] {
    std::vector<Column> all = {{"rank"}};
    auto add_fields = [&all](bool late) {
      for (const ConfigField& field : config_fields()) {
        if (field.late_column == late) all.push_back({field.name, &field});
      }
    };
    auto add_results = [&all](const std::vector<ResultColumn>& results) {
      for (const ResultColumn& result : results) all.push_back({result.name, nullptr, &result});
    };
    add_fields(false);
    add_results(first_results());
    add_fields(true);
    add_results(later_results());
    return all;
  }();
  return list;
}

// A field's value as a JSON value: counts as integers, on/off as booleans,
// the others as their names.
nlohmann::ordered_json field_json(const ConfigField& field, FieldValue value) {
  switch (field.kind) {
    case FieldKind::count: return value;
    case FieldKind::on_off: return value != 0;
    case FieldKind::choice: {
      // A choice named by digits (zero's 0, 1, 2) is a number, as the other counts are.
      const std::string text = field.text(value);
      const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
      return digits ? nlohmann::ordered_json(std::stoll(text)) : nlohmann::ordered_json(text);
    }
    case FieldKind::order: return field.text(value);
  }
  return nullptr;
}

// A result's cell as {name: value}, or {} when the row has no such result.
nlohmann::ordered_json result_json(const ResultColumn& result, const PlanRow& row) {
  nlohmann::ordered_json cell = nlohmann::ordered_json::object();
  if (!result.in(row)) return cell;
  if (result.text) {
    cell[result.name] = result.text(row);
    return cell;
  }
  const double value = result.get(row);
  if (result.boolean) cell[result.name] = value != 0;
  else cell[result.name] = value;  // infinity dumps as null
  return cell;
}

// One row as column name → value, numbers and booleans as JSON values.
nlohmann::ordered_json row_json(size_t rank, const PlanRow& row) {
  nlohmann::ordered_json j;
  for (const Column& column : columns()) {
    if (column.field) {
      j[column.name] = field_json(*column.field, column.field->get(row.config));
    } else if (column.result) {
      j.update(result_json(*column.result, row));
    } else {
      j[column.name] = rank;
    }
  }
  return j;
}

// Reads cells of one row back; `at` names the row in messages.
class RowReader {
 public:
  RowReader(const nlohmann::json& j, const std::string& at) : j_(j), at_(at) {}

  double number(const std::string& key) const {
    if (!j_.contains(key) || !j_[key].is_number()) fail(key, "expected a number");
    return j_[key].get<double>();
  }
  bool boolean(const std::string& key) const {
    if (!j_.contains(key) || !j_[key].is_boolean()) fail(key, "expected true or false");
    return j_[key].get<bool>();
  }
  std::string text(const std::string& key) const {
    if (!j_.contains(key) || !j_[key].is_string()) fail(key, "missing");
    return j_[key].get<std::string>();
  }
  FieldValue field(const ConfigField& field) const {
    switch (field.kind) {
      case FieldKind::count: {
        const double v = number(field.name);
        if (v < double(field.minimum) || v > double(int64_t(1) << 30) || v != std::floor(v)) {
          fail(field.name, "expected " + field.allowed());
        }
        return FieldValue(v);
      }
      case FieldKind::on_off: return boolean(field.name);
      case FieldKind::choice: {
        // A CSV cell of digits reads back as a number: a choice named by digits (zero's "1").
        const bool digits = j_.contains(field.name) && j_[field.name].is_number() &&
                            j_[field.name].get<double>() == std::floor(j_[field.name].get<double>());
        const std::string name = digits ? std::to_string(int64_t(j_[field.name].get<double>())) : text(field.name);
        for (size_t i = 0; i < field.choices.size(); ++i) {
          if (name == field.choices[i]) return FieldValue(i);
        }
        fail(field.name, "expected " + field.allowed());
      }
      case FieldKind::order: return field.parse(field.name, text(field.name), at_);
    }
    return field.default_value();
  }
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const {
    throw InputError(at_ + ": column '" + key + "': " + expected);
  }

 private:
  const nlohmann::json& j_;
  const std::string& at_;
};

PlanRow row_from_json(const nlohmann::json& j, const std::string& at) {
  const RowReader read(j, at);
  PlanRow row;
  for (const Column& column : columns()) {
    if (column.field) {
      column.field->set(row.config, read.field(*column.field));
    } else if (column.result && column.result->set) {
      const ResultColumn& result = *column.result;
      if (result.present && !j.contains(result.name)) continue;  // an optional column left out
      if (result.boolean) result.set(row, double(read.boolean(result.name)));
      else if (result.may_be_infinite && j[result.name].is_null()) result.set(row, HUGE_VAL);
      else result.set(row, read.number(result.name));
    }
  }
  return row;
}

std::string cell_text(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", v.get<double>());
  return buffer;
}

// The columns of a CSV of `rows`: an optional result's only when the first row has it, or when
// every CSV has it.
std::vector<std::string> table_columns(const std::vector<PlanRow>& rows) {
  std::vector<std::string> names;
  for (const Column& column : columns()) {
    const ResultColumn* result = column.result;
    const bool shown =
        !result || result->in_every_csv || (rows.empty() ? !result->present : result->in(rows.front()));
    if (shown) names.push_back(column.name);
  }
  return names;
}

}  // namespace

const std::vector<std::string>& plan_table_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const Column& column : columns()) list.push_back(column.name);
    return list;
  }();
  return names;
}

std::string plan_table_csv(const std::vector<PlanRow>& rows) {
  const std::vector<std::string> columns = table_columns(rows);
  // One line of `cell(column)` for every column.
  auto line = [&columns](const auto& cell) {
    std::vector<std::string> cells;
    for (const std::string& column : columns) cells.push_back(cell(column));
    return csv_line(cells);
  };
  std::string out = line([](const std::string& name) { return name; });
  for (size_t r = 0; r < rows.size(); ++r) {
    const nlohmann::ordered_json j = row_json(r + 1, rows[r]);
    out += line([&j](const std::string& name) { return j.contains(name) ? cell_text(j[name]) : ""; });
  }
  return out;
}

void write_plan_csv(const std::vector<PlanRow>& rows, const std::string& path) {
  write_file_atomically(path, plan_table_csv(rows));
}

std::vector<PlanRow> read_plan_csv(const std::string& path) {
  return plan_rows_from_csv(read_input_file(path), path);
}

std::vector<PlanRow> plan_rows_from_csv(const std::string& text, const std::string& path) {
  const CsvRecords csv = parse_csv(text, path);
  const std::vector<std::string>& header = csv.rows.front();
  std::vector<PlanRow> rows;
  for (size_t r = 1; r < csv.rows.size(); ++r) {
    const auto& cells = csv.rows[r];
    const std::string at = path + ":" + std::to_string(csv.lines[r]);
    if (cells.size() != header.size()) {
      throw InputError(at + ": expected " + std::to_string(header.size()) + " columns, got " +
                       std::to_string(cells.size()));
    }
    nlohmann::json j;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string& cell = cells[i];
      char* end = nullptr;
      const double value = std::strtod(cell.c_str(), &end);
      if (cell.empty()) continue;  // a column the row does not have (the band of a GPU type without one)
      if (cell == "true" || cell == "false") j[header[i]] = cell == "true";
      else if (!cell.empty() && end && *end == '\0') j[header[i]] = value;
      else j[header[i]] = cell;
    }
    rows.push_back(row_from_json(j, at));
  }
  return rows;
}

namespace {

// A printed cell: `text` in at least `width` characters, left- or right-aligned.
std::string padded(const std::string& text, int width, bool left) {
  const std::string fill(size_t(std::max<int>(0, width - int(text.size()))), ' ');
  return left ? text + fill : fill + text;
}

std::string printed_number(double value, int width, int decimals, char conversion) {
  char cell[64];
  std::snprintf(cell, sizeof cell, conversion == 'g' ? "%*.*g" : "%*.*f", width, decimals, value);
  return cell;
}

// A printed result column and its width.
struct PrintedResult {
  const ResultColumn* result;
  int width;
};

// The results a table of `rows` prints: those with a header that the first
// row has; a text column as wide as its widest cell.
std::vector<PrintedResult> printed_results(const std::vector<PlanRow>& rows) {
  std::vector<PrintedResult> printed;
  for (const auto* results : {&first_results(), &later_results()}) {
    for (const ResultColumn& result : *results) {
      if (result.header.empty()) continue;
      if (rows.empty() ? bool(result.present) : !result.in(rows.front())) continue;
      int width = result.width;
      if (result.text) {
        width = int(result.header.size());
        for (const PlanRow& row : rows) width = std::max(width, int(result.text(row).size()));
      }
      printed.push_back({&result, width});
    }
  }
  return printed;
}

// The printed cell of `result` in `row` (row == nullptr: its header).
std::string printed_cell(const ResultColumn& result, int width, const PlanRow* row) {
  if (!row) return padded(result.header, width, bool(result.text));
  if (result.text) return padded(result.text(*row), width, true);
  const double value = result.get(*row);
  if (result.boolean) return padded(value != 0 ? "yes" : "no", width, false);
  return printed_number(value, width, result.decimals, result.conversion);
}

// The printed line of one row (row == nullptr: the header line).
std::string printed_line(size_t rank, const PlanRow* row, const std::vector<PrintedResult>& results) {
  std::string line = padded(row ? std::to_string(rank) : "rank", 4, false);
  for (const ConfigField& field : config_fields()) {
    line += ' ';
    line += padded(row ? field.text(field.get(row->config)) : field.header, field.width,
                   field.left_aligned());
  }
  for (const PrintedResult& printed : results) {
    line += printed.result->rule_before ? " | " : " ";
    line += printed_cell(*printed.result, printed.width, row);
  }
  return line + "\n";
}

}  // namespace

std::string plan_table_text(const std::vector<PlanRow>& rows) {
  const std::vector<PrintedResult> results = printed_results(rows);
  std::string text = printed_line(0, nullptr, results);
  for (size_t r = 0; r < rows.size(); ++r) text += printed_line(r + 1, &rows[r], results);
  return text;
}

nlohmann::ordered_json plan_rows_to_json(const std::vector<PlanRow>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (size_t r = 0; r < rows.size(); ++r) list.push_back(row_json(r + 1, rows[r]));
  return list;
}

std::vector<PlanRow> plan_rows_from_json(const nlohmann::json& list, const std::string& source) {
  if (!list.is_array()) throw InputError(source + ": expected a list of configurations");
  std::vector<PlanRow> rows;
  for (size_t i = 0; i < list.size(); ++i) {
    rows.push_back(row_from_json(list[i], source + ": row " + std::to_string(i + 1)));
  }
  return rows;
}

}  // namespace axo
