// A pipelined run's measurements stage by stage: the ranks grouped by their stage, the warm-up step
// left out, the largest device peak of each stage; read with the run file.
#include "report/run_stages.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "report/run_file.h"
#include "tests/report/report_test_files.h"

namespace axo {
namespace {

TEST(RunStages, GroupsTheRanksByStageLeavingOutTheWarmUpStep) {
  const std::vector<MeasuredStage> stages = measured_stages(testing::two_stage_run(), "run.json", 2);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].ranks, 2);
  EXPECT_NEAR(stages[0].work_s(), 0.2 + 0.005 + 0.1, 1e-12);  // ranks 0 and 1: mean of 0.2, 0.21, plus tp_comm
  EXPECT_NEAR(stages[1].work_s(), 0.4 + 0.025 + 0.1, 1e-12);
  EXPECT_EQ(stages[0].device_peak, 2000);
  EXPECT_EQ(stages[1].device_peak, 4000);
}

// The run file's reader keeps them (a run of one stage has none to keep), and names a rank's bad stage.
TEST(RunStages, ARunFileReadsItsStagesAndNamesABadOne) {
  nlohmann::json root = testing::two_stage_run();
  const MeasuredRun run = measured_run_from_json(root, "run.json");
  ASSERT_EQ(run.stages.size(), 2u);
  EXPECT_EQ(run.stages[1].work_s(), measured_stages(root, "run.json", 2)[1].work_s());
  root["steps"][1]["ranks"][3]["stage"] = 2;
  try {
    measured_run_from_json(root, "run.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run.json: steps[1].ranks[3].stage: expected a stage in [0, 2)"),
              std::string::npos)
        << e.what();
  }
  root["grid"]["pipeline"] = 1, root["grid"]["data"] = 4;
  EXPECT_TRUE(measured_run_from_json(root, "run.json").stages.empty());
}

}  // namespace
}  // namespace axo
