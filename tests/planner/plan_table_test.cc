// CSV and JSON tables: the promised columns and lossless round trips.
#include "planner/plan_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "model/error.h"
#include "model/presets.h"
#include "planner/export.h"
#include "planner/prediction_band.h"
#include "tests/model/config_field_samples.h"

namespace axo {
namespace {

std::vector<PlanRow> some_rows() {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  SearchOptions options;
  options.gpus = 32;
  options.top = 5;
  return search(model, options).best;
}

TEST(PlanTable, HasTheColumnsTheIssueAsksFor) {
  const std::vector<std::string> required = {
      "rank", "pipeline", "data", "x", "y", "z", "microbatch", "recompute", "offload", "overlap",
      "interleave", "order", "iter_time_s", "tflops_per_gpu", "pct_peak", "mem_gib_per_gpu", "fits",
      "t_compute_s", "t_tp_comm_s", "t_bubble_s", "t_pp_comm_s", "t_dp_comm_s", "t_offload_s",
      "t_optimizer_s"};
  const auto& columns = plan_table_columns();
  ASSERT_GE(columns.size(), required.size());
  for (size_t i = 0; i < required.size(); ++i) EXPECT_EQ(columns[i], required[i]);
  const std::string csv = plan_table_csv(some_rows());
  EXPECT_EQ(csv.substr(0, 20), "rank,pipeline,data,x");
}

TEST(PlanTable, CsvRoundTrip) {
  const auto rows = some_rows();
  const std::string path = std::filesystem::temp_directory_path() / ("axo_rows_" + std::to_string(::getpid()) + ".csv");
  write_plan_csv(rows, path);
  const auto back = read_plan_csv(path);
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].config, rows[i].config);
    EXPECT_NEAR(back[i].breakdown.iter_time, rows[i].breakdown.iter_time, 1e-9 * rows[i].breakdown.iter_time);
    EXPECT_NEAR(back[i].breakdown.memory.total(), rows[i].breakdown.memory.total(), 1e3);
    EXPECT_EQ(back[i].breakdown.fits, rows[i].breakdown.fits);
  }
  std::remove(path.c_str());
}

TEST(PlanTable, JsonRoundTrip) {
  const auto rows = some_rows();
  const nlohmann::json j = nlohmann::json::parse(plan_rows_to_json(rows).dump());
  const auto back = plan_rows_from_json(j, "rows.json");
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].config, rows[i].config);
    EXPECT_DOUBLE_EQ(back[i].breakdown.dp_comm, rows[i].breakdown.dp_comm);
  }
}

// A row whose every result differs from the others.
PlanRow distinct_row(const ParallelConfig& config) {
  PlanRow row{config, {}, {}, {}, {}};
  Breakdown& b = row.breakdown;
  double next = 0.125;
  for (double* value : {&b.compute, &b.tp_comm, &b.bubble, &b.pp_comm, &b.dp_comm, &b.offload,
                        &b.optimizer, &b.iter_time, &b.tflops_per_gpu, &b.pct_peak}) {
    *value = next, next += 1.0;
  }
  for (double* bytes : {&b.memory.weights, &b.memory.gradients, &b.memory.optimizer,
                        &b.memory.activations, &b.memory.comm_buffers, &b.memory_capacity}) {
    *bytes = next * (1 << 30), next += 1.0;
  }
  b.fits = true;
  return row;
}

void expect_same_results(const Breakdown& a, const Breakdown& b) {
  const auto parts_a = components(a), parts_b = components(b);
  for (size_t i = 0; i < parts_a.size(); ++i) EXPECT_DOUBLE_EQ(parts_a[i], parts_b[i]) << kComponentNames[i];
  EXPECT_DOUBLE_EQ(a.iter_time, b.iter_time);
  EXPECT_DOUBLE_EQ(a.tflops_per_gpu, b.tflops_per_gpu);
  EXPECT_DOUBLE_EQ(a.pct_peak, b.pct_peak);
  const auto memory_a = memory_parts(a.memory), memory_b = memory_parts(b.memory);
  for (size_t i = 0; i < memory_a.size(); ++i) EXPECT_DOUBLE_EQ(memory_a[i], memory_b[i]) << kMemoryNames[i];
  EXPECT_DOUBLE_EQ(a.memory_capacity, b.memory_capacity);
  EXPECT_EQ(a.fits, b.fits);
}

TEST(PlanTable, EveryFieldAndResultRoundTrips) {
  std::vector<PlanRow> rows;
  for (const ConfigField& field : config_fields()) {
    for (FieldValue value : testing::sample_values(field)) {
      ParallelConfig c;
      field.set(c, value);
      rows.push_back(distinct_row(c));
    }
  }
  rows.push_back(distinct_row(testing::unusual_config()));
  const auto from_csv = plan_rows_from_csv(plan_table_csv(rows), "rows.csv");
  const auto from_json = plan_rows_from_json(nlohmann::json::parse(plan_rows_to_json(rows).dump()), "rows.json");
  ASSERT_EQ(from_csv.size(), rows.size());
  ASSERT_EQ(from_json.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(from_csv[i].config, rows[i].config) << fix_string(rows[i].config);
    EXPECT_EQ(from_json[i].config, rows[i].config) << fix_string(rows[i].config);
    expect_same_results(from_csv[i].breakdown, rows[i].breakdown);
    expect_same_results(from_json[i].breakdown, rows[i].breakdown);
  }
}

// The CSV text with the cell of `column` in the first row replaced by `cell`.
std::string with_cell(const std::string& csv, const std::string& column, const std::string& cell) {
  const auto& columns = plan_table_columns();
  const size_t index = size_t(std::find(columns.begin(), columns.end(), column) - columns.begin());
  const size_t row_start = csv.find('\n') + 1;
  std::string line = csv.substr(row_start, csv.find('\n', row_start) - row_start);
  std::vector<std::string> cells;
  for (size_t start = 0, comma = 0; comma != std::string::npos; start = comma + 1) {
    comma = line.find(',', start);
    cells.push_back(line.substr(start, comma == std::string::npos ? comma : comma - start));
  }
  cells.at(index) = cell;
  std::string edited;
  for (size_t i = 0; i < cells.size(); ++i) edited += (i ? "," : "") + cells[i];
  return csv.substr(0, row_start) + edited + "\n";
}

TEST(PlanTable, BadFieldValueNamesTheColumn) {
  const std::string csv = plan_table_csv({distinct_row(ParallelConfig{})});
  for (const ConfigField& field : config_fields()) {
    try {
      plan_rows_from_csv(with_cell(csv, field.name, "bogus"), "rows.csv");
      ADD_FAILURE() << field.name;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("rows.csv:2"), std::string::npos) << message;
      EXPECT_NE(message.find(field.kind == FieldKind::order ? "order 'bogus'" : "column '" + std::string(field.name) + "'"),
                std::string::npos) << message;
    }
  }
  EXPECT_THROW(plan_rows_from_csv(with_cell(csv, "recompute", "most"), "rows.csv"), InputError);
  try {
    plan_rows_from_csv(with_cell(csv, "x", "0"), "rows.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "rows.csv:2: column 'x': expected a whole number from 1 to 2^30");
  }
}

TEST(PlanTable, PrintedTableHasEveryField) {
  const auto rows = some_rows();
  const std::string text = plan_table_text(rows);
  const std::string header = text.substr(0, text.find('\n'));
  for (const ConfigField& field : config_fields()) {
    EXPECT_NE(header.find(std::string(" ") + field.header), std::string::npos) << field.header;
  }
  EXPECT_EQ(header.substr(0, 24), "rank pipe data ctx   x  ");
  // Every line as wide as the header; the best row's fields as --fix writes them.
  size_t lines = 0;
  for (size_t start = 0; start < text.size(); start = text.find('\n', start) + 1, ++lines) {
    EXPECT_EQ(text.find('\n', start) - start, header.size());
  }
  EXPECT_EQ(lines, rows.size() + 1);
  const std::string first = text.substr(header.size() + 1, header.size());
  const ParallelConfig& best = rows.front().config;
  for (const ConfigField& field : config_fields()) {
    const std::string cell = std::string(" ").append(field.text(field.get(best)));
    EXPECT_NE(first.find(cell), std::string::npos) << field.name;
  }
}

TEST(PlanTable, MalformedCsvIsLocated) {
  const std::string path = std::filesystem::temp_directory_path() / ("axo_bad_" + std::to_string(::getpid()) + ".csv");
  std::string csv = plan_table_csv(some_rows());
  csv += "1,2,3\n";
  std::ofstream(path) << csv;
  try {
    read_plan_csv(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":7: expected"), std::string::npos) << e.what();
  }
  std::ofstream(path) << "rank,pipeline\n\"unterminated,1\n";
  EXPECT_THROW(read_plan_csv(path), InputError);
  std::remove(path.c_str());
}

TEST(PlanTable, GoodputAlwaysTimeAndCostWithABudget) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  SearchOptions options;
  options.gpus = 32;
  options.top = 3;
  const std::string plain = plan_table_csv(search(model, options).best);
  const std::string header = plain.substr(0, plain.find('\n'));
  EXPECT_NE(header.find(",goodput,checkpoint_interval_s,"), std::string::npos) << header;
  EXPECT_EQ(header.find("train_days"), std::string::npos) << header;
  options.budget = {1e12, 2.5};
  const std::vector<PlanRow> rows = search(model, options).best;
  const std::string csv = plan_table_csv(rows);
  EXPECT_NE(csv.find(",goodput,checkpoint_interval_s,train_days,gpu_hours,cost,variants\n"), std::string::npos)
      << csv.substr(0, csv.find('\n'));
  const auto back = plan_rows_from_csv(csv, "rows.csv");
  ASSERT_EQ(back.size(), rows.size());
  const TrainingTime& t = rows[0].training.time;
  EXPECT_NEAR(back[0].training.time.train_days, t.train_days, 1e-9 * t.train_days);
  EXPECT_NEAR(back[0].training.time.cost, 2.5 * t.gpu_hours, 1e-6 * t.cost);
  EXPECT_NEAR(back[0].training.goodput.goodput, rows[0].training.goodput.goodput, 1e-9);
  const nlohmann::ordered_json j = plan_rows_to_json(rows);
  EXPECT_DOUBLE_EQ(j[0]["gpu_hours"].get<double>(), t.gpu_hours);
  EXPECT_DOUBLE_EQ(j[0]["checkpoint_interval_s"].get<double>(), rows[0].training.goodput.checkpoint_interval_s);
  // Failures faster than restarts: nothing trains, the time is infinite, in CSV and JSON.
  std::vector<PlanRow> stuck = rows;
  stuck[0].training.goodput.goodput = 0;
  stuck[0].training.time = time_to_train(1e12, 1e6, 1, 0, 32, 2.5);
  const auto from_json = plan_rows_from_json(nlohmann::json::parse(plan_rows_to_json(stuck).dump()), "rows.json");
  EXPECT_TRUE(std::isinf(from_json[0].training.time.train_days));
  EXPECT_TRUE(std::isinf(plan_rows_from_csv(plan_table_csv(stuck), "rows.csv")[0].training.time.cost));
}

// The band columns are the iteration time times (1 + each quantile), and read back.
TEST(PlanTable, BandColumnsFromTheGpuTypesBand) {
  std::vector<PlanRow> rows = some_rows();
  const PredictionBand band = prediction_band(load_machine("dgx-h100").gpu_type, config_dir() + "/validation");
  ASSERT_TRUE(band.band) << band.no_band;
  // No band: the columns are there (every machine's CSV has the same), their cells empty, and
  // they read back as no band; the text table leaves them out.
  const std::string without = plan_table_csv(rows);
  EXPECT_NE(without.find(",iter_time_low_s,iter_time_high_s,"), std::string::npos) << without.substr(0, without.find('\n'));
  const std::string first_row = without.substr(without.find('\n') + 1);
  EXPECT_NE(first_row.find(",,,"), std::string::npos) << first_row;
  for (const PlanRow& back : plan_rows_from_csv(without, "rows.csv")) EXPECT_FALSE(back.band);
  EXPECT_EQ(plan_table_text(rows).find("low_s"), std::string::npos);
  for (PlanRow& row : rows) {
    const auto [low, high] = band_limits(*band.band, row.breakdown.iter_time);
    row.band = IterationBand{low, high};
  }
  const std::string csv = plan_table_csv(rows);
  EXPECT_NE(csv.find(",iter_time_low_s,iter_time_high_s,"), std::string::npos) << csv.substr(0, csv.find('\n'));
  const auto from_csv = plan_rows_from_csv(csv, "rows.csv");
  const auto from_json = plan_rows_from_json(nlohmann::json::parse(plan_rows_to_json(rows).dump()), "rows.json");
  for (size_t i = 0; i < rows.size(); ++i) {
    const double t = rows[i].breakdown.iter_time;
    for (const auto* back : {&from_csv[i], &from_json[i]}) {
      ASSERT_TRUE(back->band);
      EXPECT_NEAR(back->band->low_s, t * (1 + band.band->low_pct / 100), 1e-9 * t);
      EXPECT_NEAR(back->band->high_s, t * (1 + band.band->high_pct / 100), 1e-9 * t);
    }
  }
  EXPECT_NE(plan_table_text(rows).find("low_s"), std::string::npos);
}

}  // namespace
}  // namespace axo
