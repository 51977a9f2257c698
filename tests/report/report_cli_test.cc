// `axo report` end to end: one pair, several pairs, files written, and
// usage or input mistakes exiting with status 2 and a message.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/cost_model.h"
#include "model/presets.h"
#include "model/run_schema.h"
#include "tests/report/report_test_files.h"
#include "tests/report/svg_check.h"
#include "tests/run_command.h"

namespace axo {
namespace {

using testing::StepTimes;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ReportCli : public ::testing::Test {
 protected:
  // plan<i>.yaml predicting `predicted_s` (all compute but 10% optimizer) and
  // run<i>.json measuring `measured_s` the same way, three steps with a slow first.
  void write_pair(int i, double predicted_s, double measured_s) {
    write_plan_file(testing::one_gpu_plan(testing::breakdown_of(0.9 * predicted_s, 0, 0, 0, 0, 0,
                                                                0.1 * predicted_s)),
                    plan(i));
    const StepTimes step{measured_s, {0.9 * measured_s, 0, 0, 0, 0, 0, 0.1 * measured_s}};
    const StepTimes warm_up{10 * measured_s, {10 * measured_s, 0, 0, 0, 0, 0, 0}};
    folder_.write("run" + std::to_string(i) + ".json", testing::run_json({warm_up, step, step}).dump(2));
  }
  // Sets `key` at the top of run<i>.json.
  void add_to_run(int i, const std::string& key, const nlohmann::json& value) {
    nlohmann::json root = nlohmann::json::parse(read_text(run(i)));
    root[key] = value;
    folder_.write("run" + std::to_string(i) + ".json", root.dump());
  }
  std::string plan(int i) const { return folder_.file("plan" + std::to_string(i) + ".yaml"); }
  std::string run(int i) const { return folder_.file("run" + std::to_string(i) + ".json"); }
  std::string plan_path(const std::string& name) const { return folder_.file(name + ".yaml"); }
  std::string pair(int i) const { return " --plan " + plan(i) + " --run " + run(i); }
  testing::TemporaryFolder folder_{"report_cli"};
};

TEST_F(ReportCli, OnePairPrintsTheTableAndWritesCsvAndSvg) {
  write_pair(1, 2.0, 2.5);
  const auto r = testing::run_axo("report" + pair(1) + " --csv " + folder_.file("cost.csv") +
                                  " --svg " + folder_.file("cost.svg"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("3 steps, 2 averaged (the first is warm-up)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("compute          1.8000       2.2500      +0.4500    +25.0\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("total            2.0000       2.5000      +0.5000    +25.0\n"), std::string::npos) << r.output;
  const std::string csv = read_text(folder_.file("cost.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "component,predicted_s,measured_s,error_s,error_pct");
  EXPECT_NE(csv.find("\ncompute,1.8,2.25,0.45,25\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nbubble,0,0,0,n/a\n"), std::string::npos) << csv;
  const testing::SvgCheck svg = testing::check_svg(read_text(folder_.file("cost.svg")));
  EXPECT_TRUE(svg.well_formed) << svg.error;
  EXPECT_EQ(svg.root, "svg");
}

TEST_F(ReportCli, SaysWhenRanksSharedCores) {
  write_pair(1, 2.0, 2.5);
  auto r = testing::run_axo("report" + pair(1));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("Note:"), std::string::npos) << r.output;
  add_to_run(1, "node", {{"ranks", 4}, {"cores", 2}});
  r = testing::run_axo("report" + pair(1));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Note: " + run(1) + " ran 4 ranks on 2 cores per node"), std::string::npos) << r.output;
}

TEST_F(ReportCli, ComparesDeviceMemoryWhenTheRunRecordedIt) {
  write_pair(1, 2.0, 2.5);
  auto r = testing::run_axo("report" + pair(1));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("Device memory"), std::string::npos) << r.output;
  auto rank = [](int64_t activations) {
    return nlohmann::json{{"device_peak_bytes", 3000 + activations},
                          {"device_at_peak_bytes",
                           {{"weights", 1000}, {"gradients", 1000}, {"optimizer", 0}, {"activations", activations},
                            {"comm_buffers", 1000}}},
                          {"host_bytes", 4000}};
  };
  add_to_run(1, "memory", {{"offload", true}, {"ranks", {rank(100), rank(200 << 20)}}});
  Plan offloaded = testing::one_gpu_plan(testing::breakdown_of(1.8, 0, 0, 0, 0, 0, 0.2));
  offloaded.config.offload = true;  // the run's offload is the plan's
  write_plan_file(offloaded, plan(1));
  r = testing::run_axo("report" + pair(1));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Device memory of the fullest rank (1) at its peak, with offload, against the memory model:"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\noptimizer             0.000          0.000      n/a\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nactivations "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("       200.000 "), std::string::npos) << r.output;
}

TEST_F(ReportCli, MachineCostsThePlansAgain) {
  write_pair(1, 2.0, 2.5);
  // The plan's own prediction (2.0 s) is replaced by gpt2-tiny costed on Selene: milliseconds.
  const auto r = testing::run_axo("report" + pair(1) + " --machine selene");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("total            2.0000"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("on 1 x selene"), std::string::npos) << r.output;
  const auto missing = testing::run_axo("report" + pair(1) + " --machine no-such-machine");
  EXPECT_EQ(missing.code, 2) << missing.output;
}

TEST_F(ReportCli, SaysWhenTheMachineIsAPartialCalibration) {
  write_pair(1, 2.0, 2.5);
  auto r = testing::run_axo("report" + pair(1) + " --machine selene");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("partial calibration"), std::string::npos) << r.output;
  const std::string partial = testing::partial_selene(folder_);
  r = testing::run_axo("report" + pair(1) + " --machine " + partial);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Note: " + partial + " is a partial calibration (rank 1: all_reduce stopped)"),
            std::string::npos)
      << r.output;
  write_pair(2, 2.0, 2.5);  // several pairs: said once
  r = testing::run_axo("report" + pair(1) + pair(2) + " --machine " + partial);
  ASSERT_EQ(r.code, 0) << r.output;
  const size_t first = r.output.find("is a partial calibration");
  ASSERT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("is a partial calibration", first + 1), std::string::npos) << r.output;
}

TEST_F(ReportCli, SeveralPairsRankAndCheckThePick) {
  write_pair(1, 1.0, 2.1);  // the planner's pick, 5% slower than the fastest
  write_pair(2, 1.5, 2.0);
  write_pair(3, 2.0, 3.0);
  const auto r = testing::run_axo("report" + pair(1) + pair(2) + pair(3) + " --csv " +
                                  folder_.file("runs.csv") + " --svg " + folder_.file("runs.svg"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Spearman rank correlation (predicted vs measured order): +0.500 over 3 runs"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("5.0% slower than the fastest (run 2, 2.0000 s): within 10%"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(plan(3) + " vs " + run(3)), std::string::npos) << r.output;
  const std::string csv = read_text(folder_.file("runs.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "plan_run,predicted_s,measured_s,error_s,error_pct");
  EXPECT_TRUE(testing::check_svg(read_text(folder_.file("runs.svg"))).well_formed);
}

TEST_F(ReportCli, MismatchedPairsAndMissingOptionsExitTwo) {
  write_pair(1, 1.0, 1.0);
  write_pair(2, 1.0, 1.0);
  auto r = testing::run_axo("report" + pair(1) + " --plan " + plan(2));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--plan given 2 times and --run 1 times"), std::string::npos) << r.output;
  r = testing::run_axo("report --plan " + plan(1));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--run is required"), std::string::npos) << r.output;
  r = testing::run_axo("report --plan " + plan(1) + " --run " + folder_.file("absent.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("absent.json: cannot open the file"), std::string::npos) << r.output;
  r = testing::run_axo("report" + pair(1) + pair(1));  // one run counted as two points
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--run " + run(1) + ": given twice (as " + run(1) + " before)"), std::string::npos) << r.output;
  r = testing::run_axo("report" + pair(1) + " --svg " + folder_.file("no/such/folder/cost.svg"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot write"), std::string::npos) << r.output;
}

// A run of another grid, model or batch than the plan's is refused, naming both values.
TEST_F(ReportCli, ARunOfAnotherGridIsRefused) {
  write_pair(1, 2.0, 2.5);
  add_to_run(1, "grid", {{"pipeline", 4}, {"data", 1}, {"z", 1}, {"y", 1}, {"x", 1}, {"order", "xyzcdp"}});
  auto r = testing::run_axo("report" + pair(1));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("trained pipeline=4 where the plan has pipeline=1"), std::string::npos) << r.output;
  write_pair(3, 2.0, 2.5);
  add_to_run(3, "microbatch", 32);
  r = testing::run_axo("report" + pair(3));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("trained microbatch=32 where the plan has microbatch=1"), std::string::npos) << r.output;
  write_pair(3, 2.0, 2.5);
  add_to_run(3, "model", "gpt2-mini");
  r = testing::run_axo("calibrate --refine " + run(3) + " --plan " + plan(3) + " --machine selene --out " +
                       folder_.file("refined.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("trained model=gpt2-mini where the plan has model=gpt2-tiny"), std::string::npos) << r.output;
  write_pair(2, 2.0, 2.5);
  add_to_run(2, "grid", {{"pipeline", 1}, {"data", 1}, {"z", 1}, {"y", 1}, {"x", 1}, {"order", "xyzcdp"}});
  r = testing::run_axo("report" + pair(2) + pair(1));
  EXPECT_EQ(r.code, 2) << r.output;
  r = testing::run_axo("report" + pair(2));
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST_F(ReportCli, BadRunFilesExitTwoNamingTheField) {
  write_pair(1, 1.0, 1.0);
  nlohmann::json run_file = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  run_file["steps"][0]["components_s"].erase("dp_comm");
  folder_.write("run1.json", run_file.dump());
  auto r = testing::run_axo("report" + pair(1));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(run(1) + ": steps[0].components_s.dp_comm: missing"), std::string::npos) << r.output;

  run_file = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  run_file["steps"][0]["iteration_s"] = "slow";
  folder_.write("run1.json", run_file.dump());
  r = testing::run_axo("report" + pair(1));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(run(1) + ": steps[0].iteration_s: expected a number of seconds, got string"),
            std::string::npos) << r.output;

  folder_.write("run1.json", "not json");
  r = testing::run_axo("report" + pair(1));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("malformed JSON"), std::string::npos) << r.output;
}

TEST_F(ReportCli, PlanWithoutPredictionExitsTwo) {
  write_pair(1, 1.0, 1.0);
  write_plan_file(testing::one_gpu_plan(Breakdown{}), plan(1));
  const auto r = testing::run_axo("report" + pair(1));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no 'predicted' breakdown to compare with (its predicted.iter_time_s is absent or 0): write "
                          "the plan with axo plan --out, or give --machine to price it"),
            std::string::npos)
      << r.output;
}

// Issue: the per-stage table predicted 0 s for every layer unless --machine was given (plan.yaml
// stores no per-layer seconds), and all stages 0 on a calibrated profile's plan, whose machine no
// preset names. The plan's machine prices the stages, as --machine does; one that cannot be
// loaded is named, and no stage time is predicted.
TEST_F(ReportCli, TheStagesArePricedOnThePlansMachine) {
  // A plan as axo plan writes it: its prediction the preset's (a named but unknown profile's: any).
  auto write_stage_pair = [this](const std::string& machine, double scale = 1) {
    Plan plan = testing::one_gpu_plan(testing::breakdown_of(0.5, 0, 0, 0, 0, 0, 0.1));
    plan.machine = machine;
    plan.gpus = 4, plan.config.pipeline = 2, plan.config.data = 2, plan.config.microbatch = 1;
    if (machine == "perlmutter") plan.predicted = CostModel(plan.model, load_machine(machine)).evaluate(plan.config);
    plan.predicted.iter_time *= scale;
    write_plan_file(plan, plan_path(machine));
    nlohmann::json root = testing::run_json({{1.0, {0.9, 0, 0, 0, 0, 0, 0.1}}, {1.0, {0.9, 0, 0, 0, 0, 0, 0.1}}});
    testing::run_of(root, plan);
    for (auto& step : root["steps"]) {
      nlohmann::json components;  // every rank's whole (run_file.h): 0.4 s of compute
      for (const char* name : kComponentNames) components[name] = std::string(name) == "compute" ? 0.4 : 0.0;
      for (int k = 0; k < 4; ++k) step["ranks"].push_back({{"rank", k}, {"stage", k / 2}, {"components_s", components}});
    }
    folder_.write(machine + ".json", root.dump());
    return " --plan " + plan_path(machine) + " --run " + folder_.file(machine + ".json");
  };
  auto stage_table = [](const std::string& output) { return output.substr(output.find("Per pipeline stage")); };
  const auto plain = testing::run_axo("report" + write_stage_pair("perlmutter"));
  ASSERT_EQ(plain.code, 0) << plain.output;
  const auto costed = testing::run_axo("report" + write_stage_pair("perlmutter") + " --machine perlmutter");
  ASSERT_EQ(costed.code, 0) << costed.output;
  ASSERT_NE(plain.output.find("Per pipeline stage"), std::string::npos) << plain.output;
  EXPECT_EQ(stage_table(plain.output), stage_table(costed.output));
  EXPECT_EQ(stage_table(plain.output).find("n/a"), std::string::npos) << plain.output;
  // A plan the preset of its name prices otherwise was planned on another profile of that name
  // (an edited copy): its stages are not priced on the preset, and the note says so.
  const auto edited = testing::run_axo("report" + write_stage_pair("perlmutter", 1.25));
  ASSERT_EQ(edited.code, 0) << edited.output;
  EXPECT_NE(edited.output.find("was planned on another profile than the preset 'perlmutter' (it predicts "),
            std::string::npos) << edited.output;
  EXPECT_NE(stage_table(edited.output).find("n/a"), std::string::npos) << edited.output;

  const auto calibrated = testing::run_axo("report" + write_stage_pair("calibrated-elsewhere"));
  ASSERT_EQ(calibrated.code, 0) << calibrated.output;
  EXPECT_NE(calibrated.output.find(plan_path("calibrated-elsewhere") +
                                   " prices its stages on machine 'calibrated-elsewhere', which cannot be loaded"),
            std::string::npos)
      << calibrated.output;
  const std::string table = stage_table(calibrated.output);
  EXPECT_NE(table.find("\n0      1                 n/a     0.400000      n/a"), std::string::npos) << table;
  EXPECT_NE(table.find("\n1      1                 n/a     0.400000      n/a"), std::string::npos) << table;
  EXPECT_EQ(table.find("0.000000"), std::string::npos) << table;
}

// Issue: the component table compared the slowest stage's predicted compute, tp_comm and bubble with
// the mean over every rank (a faster stage computes less and waits longer): its measured side is now
// the stage the model prices slowest, and says so; without stage seconds it stays the mean, and says so.
TEST_F(ReportCli, ThePipelinesComponentsAreMeasuredOnItsPaceStage) {
  auto write_stage_pair = [this](const std::string& machine) {
    Plan plan = testing::one_gpu_plan(testing::breakdown_of(0.5, 0, 0, 0, 0, 0, 0.1));
    plan.machine = machine;
    plan.gpus = 4, plan.config.pipeline = 2, plan.config.data = 2, plan.config.microbatch = 1;
    if (machine == "perlmutter") plan.predicted = CostModel(plan.model, load_machine(machine)).evaluate(plan.config);
    write_plan_file(plan, plan_path(machine));
    nlohmann::json root = testing::run_json({{1.0, {0.4, 0, 0.5, 0, 0, 0, 0.1}}, {1.0, {0.4, 0, 0.5, 0, 0, 0, 0.1}}});
    testing::run_of(root, plan);
    for (auto& step : root["steps"]) {
      for (int k = 0; k < 4; ++k) {  // stage 0 computes 0.2 s and waits 0.7, stage 1 computes 0.6 and waits 0.3
        const double compute = k / 2 == 0 ? 0.2 : 0.6;
        nlohmann::json components;
        for (const char* name : kComponentNames) components[name] = 0.0;
        components["compute"] = compute, components["bubble"] = 0.9 - compute, components["optimizer"] = 0.1;
        step["ranks"].push_back({{"rank", k}, {"stage", k / 2}, {"components_s", components}});
      }
    }
    folder_.write(machine + ".json", root.dump());
    return " --plan " + plan_path(machine) + " --run " + folder_.file(machine + ".json");
  };
  // The compute row's measured seconds (the table's third column).
  auto measured_compute = [](const std::string& output) {
    std::istringstream row(output.substr(output.find("\ncompute ") + 1));
    std::string name;
    double predicted = 0, measured = 0;
    row >> name >> predicted >> measured;
    return measured;
  };
  const auto priced = testing::run_axo("report" + write_stage_pair("perlmutter"));
  ASSERT_EQ(priced.code, 0) << priced.output;
  const size_t note = priced.output.find("(measured: the mean over stage ");
  ASSERT_NE(note, std::string::npos) << priced.output;
  const int pace = priced.output[note + std::string("(measured: the mean over stage ").size()] - '0';
  ASSERT_TRUE(pace == 0 || pace == 1) << priced.output;
  EXPECT_DOUBLE_EQ(measured_compute(priced.output), pace == 0 ? 0.2 : 0.6) << priced.output;
  EXPECT_NE(priced.output.find("the stage the model prices slowest"), std::string::npos) << priced.output;

  const auto unpriced = testing::run_axo("report" + write_stage_pair("calibrated-elsewhere"));
  ASSERT_EQ(unpriced.code, 0) << unpriced.output;
  EXPECT_DOUBLE_EQ(measured_compute(unpriced.output), 0.4) << unpriced.output;
  EXPECT_NE(unpriced.output.find("(measured: the mean over every stage's ranks"), std::string::npos) << unpriced.output;
}

}  // namespace
}  // namespace axo
