// CSV and JSON tables of ranked configurations (see plan_table.h).
#include "planner/plan_table.h"

#include <csv.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "model/atomic_file.h"
#include "model/error.h"
#include "planner/row_folding.h"

namespace axo {

namespace {

constexpr double GiB = double(1ull << 30);

// One row as column name → value, numbers and booleans as JSON values.
nlohmann::ordered_json row_json(size_t rank, const PlanRow& row) {
  const ParallelConfig& c = row.config;
  const Breakdown& b = row.breakdown;
  nlohmann::ordered_json j;
  j["rank"] = rank;
  j["pipeline"] = c.pipeline;
  j["data"] = c.data;
  j["x"] = c.x;
  j["y"] = c.y;
  j["z"] = c.z;
  j["microbatch"] = c.microbatch;
  j["recompute"] = to_string(c.recompute);
  j["offload"] = c.offload;
  j["overlap"] = c.overlap;
  j["interleave"] = c.interleave;
  j["order"] = c.order_string();
  j["iter_time_s"] = b.iter_time;
  j["tflops_per_gpu"] = b.tflops_per_gpu;
  j["pct_peak"] = b.pct_peak;
  j["mem_gib_per_gpu"] = b.memory.total() / GiB;
  j["fits"] = b.fits;
  const auto values = components(b);
  for (size_t i = 0; i < values.size(); ++i) j[std::string("t_") + kComponentNames[i] + "_s"] = values[i];
  j["sequence_parallel"] = c.sequence_parallel;
  j["mem_weights_gib"] = b.memory.weights / GiB;
  j["mem_gradients_gib"] = b.memory.gradients / GiB;
  j["mem_optimizer_gib"] = b.memory.optimizer / GiB;
  j["mem_activations_gib"] = b.memory.activations / GiB;
  j["mem_buffers_gib"] = b.memory.comm_buffers / GiB;
  j["mem_capacity_gib"] = b.memory_capacity / GiB;
  // Failures and time to train (model/goodput.h); days, GPU-hours and cost with --tokens (and a price).
  const TrainingEstimate& t = row.training;
  j["goodput"] = t.goodput.goodput;
  j["checkpoint_interval_s"] = t.goodput.checkpoint_interval_s;
  if (t.has_time) j["train_days"] = t.time.train_days, j["gpu_hours"] = t.time.gpu_hours;
  if (t.has_cost) j["cost"] = t.time.cost;
  j["variants"] = variants_text(c, row.same_numbers);  // same numbers, other fields (row_folding.h)
  return j;
}

// Reads one row back; `at` names the row in messages.
PlanRow row_from_json(const nlohmann::json& j, const std::string& at) {
  auto number = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_number()) {
      throw InputError(at + ": column '" + key + "': expected a number");
    }
    return j[key].get<double>();
  };
  auto integer = [&](const char* key) {
    const double v = number(key);
    if (v < 1 || v > double(int64_t(1) << 30) || v != std::floor(v)) {
      throw InputError(at + ": column '" + key + "': expected a whole number from 1 to 2^30");
    }
    return int64_t(v);
  };
  auto boolean = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_boolean()) {
      throw InputError(at + ": column '" + key + "': expected true or false");
    }
    return j[key].get<bool>();
  };
  auto text = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_string()) throw InputError(at + ": column '" + key + "': missing");
    return j[key].get<std::string>();
  };
  PlanRow row;
  ParallelConfig& c = row.config;
  c.pipeline = integer("pipeline");
  c.data = integer("data");
  c.x = integer("x");
  c.y = integer("y");
  c.z = integer("z");
  c.microbatch = integer("microbatch");
  const std::string recompute = text("recompute");
  if (recompute == "none") c.recompute = Recompute::none;
  else if (recompute == "selective") c.recompute = Recompute::selective;
  else if (recompute == "full") c.recompute = Recompute::full;
  else throw InputError(at + ": column 'recompute': expected none, selective or full");
  c.offload = boolean("offload");
  c.overlap = boolean("overlap");
  c.interleave = integer("interleave");
  c.order = parse_order(text("order"), at);
  c.sequence_parallel = boolean("sequence_parallel");
  Breakdown& b = row.breakdown;
  b.iter_time = number("iter_time_s");
  b.tflops_per_gpu = number("tflops_per_gpu");
  b.pct_peak = number("pct_peak");
  b.fits = boolean("fits");
  double* fields[] = {&b.compute, &b.tp_comm, &b.bubble, &b.pp_comm, &b.dp_comm, &b.offload, &b.optimizer};
  for (size_t i = 0; i < kComponentNames.size(); ++i) {
    *fields[i] = number((std::string("t_") + kComponentNames[i] + "_s").c_str());
  }
  b.memory.weights = number("mem_weights_gib") * GiB;
  b.memory.gradients = number("mem_gradients_gib") * GiB;
  b.memory.optimizer = number("mem_optimizer_gib") * GiB;
  b.memory.activations = number("mem_activations_gib") * GiB;
  b.memory.comm_buffers = number("mem_buffers_gib") * GiB;
  b.memory_capacity = number("mem_capacity_gib") * GiB;
  TrainingEstimate& t = row.training;
  if (j.contains("goodput")) t.goodput.goodput = number("goodput");
  if (j.contains("checkpoint_interval_s")) t.goodput.checkpoint_interval_s = number("checkpoint_interval_s");
  // JSON writes infinity (a goodput of 0: training never ends) as null.
  auto days_hours_or_cost = [&](const char* key) {
    return j[key].is_null() ? std::numeric_limits<double>::infinity() : number(key);
  };
  t.has_time = j.contains("train_days");
  if (t.has_time) {
    t.time.train_days = days_hours_or_cost("train_days");
    t.time.gpu_hours = days_hours_or_cost("gpu_hours");
  }
  t.has_cost = j.contains("cost");
  if (t.has_cost) t.time.cost = days_hours_or_cost("cost");
  return row;
}

// Plain when it needs no quoting; otherwise quoted by libcsv.
std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted(value.size() * 2 + 2, '\0');
  quoted.resize(csv_write(quoted.data(), quoted.size(), value.data(), value.size()));
  return quoted;
}

std::string cell_text(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", v.get<double>());
  return buffer;
}

// libcsv callbacks: collect fields into rows, remembering each row's line.
struct CsvCollector {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> current;
  static void field(void* data, size_t size, void* self) {
    static_cast<CsvCollector*>(self)->current.emplace_back(static_cast<char*>(data), size);
  }
  static void record(int, void* self) {
    auto* collector = static_cast<CsvCollector*>(self);
    collector->rows.push_back(std::move(collector->current));
    collector->current.clear();
  }
};

}  // namespace

const std::vector<std::string>& plan_table_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> names;
    const nlohmann::ordered_json example = row_json(1, PlanRow{});
    for (const auto& entry : example.items()) names.push_back(entry.key());
    return names;
  }();
  return columns;
}

std::string plan_table_csv(const std::vector<PlanRow>& rows) {
  std::string out;
  std::vector<std::string> columns = plan_table_columns();
  if (!rows.empty()) {  // and train_days, gpu_hours, cost when the rows have them
    columns.clear();
    const nlohmann::ordered_json first = row_json(1, rows.front());
    for (const auto& entry : first.items()) columns.push_back(entry.key());
  }
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_field(columns[i]);
  out += "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    const nlohmann::ordered_json j = row_json(r + 1, rows[r]);
    for (size_t i = 0; i < columns.size(); ++i) {
      out += (i ? "," : "") + csv_field(cell_text(j[columns[i]]));
    }
    out += "\n";
  }
  return out;
}

void write_plan_csv(const std::vector<PlanRow>& rows, const std::string& path) {
  write_file_atomically(path, plan_table_csv(rows));
}

std::vector<PlanRow> read_plan_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return plan_rows_from_csv(buffer.str(), path);
}

std::vector<PlanRow> plan_rows_from_csv(const std::string& text, const std::string& path) {
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_APPEND_NULL) != 0) throw std::runtime_error("libcsv: init failed");
  CsvCollector collector;
  const size_t parsed = csv_parse(&parser, text.data(), text.size(), CsvCollector::field,
                                  CsvCollector::record, &collector);
  const bool ok = parsed == text.size() && csv_fini(&parser, CsvCollector::field,
                                                     CsvCollector::record, &collector) == 0;
  const std::string error = csv_strerror(csv_error(&parser));
  csv_free(&parser);
  if (!ok) throw InputError(path + ": malformed CSV near byte " + std::to_string(parsed) + ": " + error);
  if (collector.rows.empty()) throw InputError(path + ": empty table (no header line)");
  const std::vector<std::string>& header = collector.rows.front();
  std::vector<PlanRow> rows;
  for (size_t r = 1; r < collector.rows.size(); ++r) {
    const auto& cells = collector.rows[r];
    const std::string at = path + ":" + std::to_string(r + 1);
    if (cells.size() != header.size()) {
      throw InputError(at + ": expected " + std::to_string(header.size()) + " columns, got " +
                       std::to_string(cells.size()));
    }
    nlohmann::json j;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string& cell = cells[i];
      char* end = nullptr;
      const double value = std::strtod(cell.c_str(), &end);
      if (cell == "true" || cell == "false") j[header[i]] = cell == "true";
      else if (!cell.empty() && end && *end == '\0') j[header[i]] = value;
      else j[header[i]] = cell;
    }
    rows.push_back(row_from_json(j, at));
  }
  return rows;
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
