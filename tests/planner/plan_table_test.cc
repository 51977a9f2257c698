// CSV and JSON tables: the promised columns and lossless round trips.
#include "planner/plan_table.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace axo
