// `axo calibrate --refine` end to end: a run made by costing a plan on a
// profile with known factors is fitted back to them, and mistakes exit 2.
#include <gtest/gtest.h>

#include <fstream>

#include "model/cost_model.h"
#include "model/yaml_fields.h"
#include "report/profile_refinement.h"
#include "report/stage_comparison.h"
#include "tests/report/report_test_files.h"
#include "tests/run_command.h"

namespace axo {
namespace {

class RefineCli : public ::testing::Test {
 protected:
  void SetUp() override {
    Plan plan;
    plan.model = load_model("gpt3-1.3b");
    plan.machine = "selene";
    plan.config.pipeline = 2, plan.config.data = 2, plan.config.y = 4, plan.config.microbatch = 1;
    plan.gpus = 16;
    const MachineProfile selene = load_machine("selene");
    plan.predicted = CostModel(plan.model, selene).evaluate(plan.config);
    write_plan_file(plan, folder_.file("plan.yaml"));
    // Measured: GEMMs at 80% of the profile's rate, the network at half.
    const Breakdown truth =
        CostModel(plan.model, apply_refinement_factors(selene, {0.8, 1, 0.5, 1, 1})).evaluate(plan.config);
    const testing::StepTimes step{truth.iter_time, components(truth)};
    nlohmann::json run = testing::run_json({step, step, step});
    testing::run_of(run, plan);
    folder_.write("run.json", run.dump());
  }
  std::string files() const {
    return " --plan " + folder_.file("plan.yaml") + " --machine selene --out " + folder_.file("refined.yaml");
  }
  testing::TemporaryFolder folder_{"refine_cli"};
};

TEST_F(RefineCli, FitsKnownFactorsAndWritesTheProfile) {
  const auto r = testing::run_axo("calibrate --refine " + folder_.file("run.json") + files());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("RMS relative component error:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("% after"), std::string::npos) << r.output;
  const MachineProfile refined = load_machine_profile(folder_.file("refined.yaml"));
  EXPECT_EQ(refined.name, "selene-refined");
  const MachineProfile selene = load_machine("selene");
  EXPECT_NEAR(refined.gemm_max_efficiency, 0.8 * selene.gemm_max_efficiency, 0.01);
  EXPECT_NEAR(refined.collective_slowdown, 2.0, 0.02);  // collectives at half the speed
  const YAML::Node file = load_yaml_file(folder_.file("refined.yaml"));
  EXPECT_LT(file["metadata"]["refinement"]["rms_component_error_after"].as<double>(), 1e-3);
}

TEST_F(RefineCli, SaysWhenTheProfileIsAPartialCalibration) {
  const std::string partial = testing::partial_selene(folder_);
  const auto r = testing::run_axo("calibrate --refine " + folder_.file("run.json") + " --plan " +
                                  folder_.file("plan.yaml") + " --machine " + partial + " --out " +
                                  folder_.file("refined.yaml"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Note: " + partial + " is a partial calibration (rank 1: all_reduce stopped)"),
            std::string::npos)
      << r.output;
}

// A run on CPU ranks fitted into a GPU profile would write an A100 profile of CPU speeds.
TEST_F(RefineCli, ARunOfAnotherKindOfMachineIsRefused) {
  nlohmann::json run = nlohmann::json::parse(std::ifstream(folder_.file("run.json")));
  run["backend"] = "cpu";
  folder_.write("cpu.json", run.dump());
  const auto r = testing::run_axo("calibrate --refine " + folder_.file("cpu.json") + files());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("cpu.json ran on the cpu backend, and selene describes a gpu machine: its predictions "
                          "are of another machine than the run's: refine the profile of the machine it ran on"),
            std::string::npos)
      << r.output;
  run["backend"] = "cuda";
  folder_.write("cuda.json", run.dump());
  EXPECT_EQ(testing::run_axo("calibrate --refine " + folder_.file("cuda.json") + files()).code, 0);
}

TEST_F(RefineCli, MistakesExitTwo) {
  const std::string run = folder_.file("run.json");
  auto r = testing::run_axo("calibrate --refine " + run + " " + run + files());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--refine: 2 run(s) but 1 --plan"), std::string::npos) << r.output;
  r = testing::run_axo("calibrate --refine " + run + " --plan " + folder_.file("plan.yaml") + " --out " +
                       folder_.file("refined.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--refine needs --machine"), std::string::npos) << r.output;
  r = testing::run_axo("calibrate --refine " + run + files() + " --quick");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("excludes"), std::string::npos) << r.output;
  r = testing::run_axo("calibrate" + files());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--plan and --machine go with --refine"), std::string::npos) << r.output;
  r = testing::run_axo("calibrate --refine " + run + " " + run + " --plan " + folder_.file("plan.yaml") + files());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("given twice (as " + run + " before): the fit would weigh it twice"), std::string::npos)
      << r.output;
  r = testing::run_axo("calibrate --refine " + folder_.file("absent.json") + files());
  EXPECT_EQ(r.code, 2) << r.output;
}

// A pipelined run's step components are the mean over every rank; the fit compares the prediction
// (the slowest stage's compute and bubble) with the ranks of the stage the profile prices slowest.
// Here that stage measured the known factors' breakdown and the other stage half its compute:
// fitted to the mean over ranks, the GEMM factor would come out near 0.6, not 0.8.
TEST_F(RefineCli, APipelinedRunIsFittedOnItsPaceStage) {
  const Plan plan = read_plan_file(folder_.file("plan.yaml"));
  const MachineProfile selene = load_machine("selene");
  const Breakdown truth =
      CostModel(plan.model, apply_refinement_factors(selene, {0.8, 1, 0.5, 1, 1})).evaluate(plan.config);
  nlohmann::json run = nlohmann::json::parse(std::ifstream(folder_.file("run.json")));
  auto rank_components = [&](int stage, int pace) {
    std::array<double, 7> values = components(truth);
    if (stage != pace) values[1] /= 2, values[0] /= 2, values[2] += values[0];  // computes less, waits longer
    nlohmann::json json;
    for (size_t i = 0; i < kComponentNames.size(); ++i) json[kComponentNames[i]] = values[i];
    return json;
  };
  auto add_ranks = [&](int pace) {
    for (auto& step : run["steps"]) {
      step["ranks"] = nlohmann::json::array();
      for (int k = 0; k < 16; ++k) {
        const int stage = k / 8;  // xyzcdp: the pipeline outermost
        step["ranks"].push_back({{"rank", k}, {"stage", stage}, {"components_s", rank_components(stage, pace)}});
      }
      for (const char* name : kComponentNames) {  // as the trainer writes it: the mean over ranks
        step["components_s"][name] = (rank_components(0, pace)[name].get<double>() +
                                      rank_components(1, pace)[name].get<double>()) / 2;
      }
    }
  };
  add_ranks(0);
  const std::vector<MeasuredStage> measured = measured_stages(run, "run.json", 2);
  const std::optional<int64_t> pace = pace_stage(compare_stages(plan, MeasuredRun{}, measured, selene));
  ASSERT_TRUE(pace);
  add_ranks(int(*pace));
  folder_.write("staged.json", run.dump());
  const auto r = testing::run_axo("calibrate --refine " + folder_.file("staged.json") + files());
  ASSERT_EQ(r.code, 0) << r.output;
  const MachineProfile refined = load_machine_profile(folder_.file("refined.yaml"));
  EXPECT_NEAR(refined.gemm_max_efficiency, 0.8 * selene.gemm_max_efficiency, 0.01);
  EXPECT_NEAR(refined.collective_slowdown, 2.0, 0.02);
}

}  // namespace
}  // namespace axo
