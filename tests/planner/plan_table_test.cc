// CSV and JSON tables: the promised columns and lossless round trips.
#include "planner/plan_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "model/error.h"
#include "model/presets.h"

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

}  // namespace
}  // namespace axo
