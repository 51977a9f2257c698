// Reading run.json: means over steps, the warm-up step, unknown keys, and
// messages that name the file and the field.
#include "report/run_file.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "model/error.h"
#include "model/run_schema.h"
#include "tests/report/report_test_files.h"

namespace axo {
namespace {

using testing::StepTimes;

std::string error_of(const nlohmann::json& root) {
  try {
    measured_run_from_json(root, "run.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RunFile, MeanLeavesOutTheWarmUpStepFromThreeSteps) {
  const nlohmann::json root = testing::run_json({{9.0, {8, 0, 0, 0, 0, 0, 1}},
                                                 {2.0, {1.5, 0, 0, 0, 0, 0, 0.5}},
                                                 {4.0, {3.5, 0, 0, 0, 0, 0, 0.5}}});
  const MeasuredRun run = measured_run_from_json(root, "run.json");
  EXPECT_EQ(run.steps, 3u);
  EXPECT_EQ(run.steps_used, 2u);
  EXPECT_DOUBLE_EQ(run.iteration_s, 3.0);
  EXPECT_DOUBLE_EQ(run.components[0], 2.5);
  EXPECT_DOUBLE_EQ(run.components[6], 0.5);
  EXPECT_DOUBLE_EQ(run.components[1], 0.0);
}

TEST(RunFile, KeepsEveryStepBelowThree) {
  const nlohmann::json root =
      testing::run_json({{9.0, {8, 0, 0, 0, 0, 0, 1}}, {3.0, {2, 0, 0, 0, 0, 0, 1}}});
  const MeasuredRun run = measured_run_from_json(root, "run.json");
  EXPECT_EQ(run.steps_used, 2u);
  EXPECT_DOUBLE_EQ(run.iteration_s, 6.0);
  EXPECT_DOUBLE_EQ(run.components[0], 5.0);
}

TEST(RunFile, IgnoresTheParallelExecutorsExtraKeys) {
  nlohmann::json root = testing::run_json({{1.0, {0.5, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05}}});
  root["ranks"] = 8;
  root["grid"] = {{"pipeline", 2}, {"data", 2}, {"x", 1}, {"y", 2}, {"z", 1}};
  root["schedule"] = "message-driven";
  for (int rank = 0; rank < 8; ++rank) {  // xyzdp: ranks 0-3 on stage 0
    root["steps"][0]["ranks"].push_back({{"rank", rank}, {"stage", rank / 4}, {"iteration_s", 1.0}});
  }
  root["steps"][0]["components_s"]["other"] = 0.3;
  const MeasuredRun run = measured_run_from_json(root, "run.json");
  EXPECT_DOUBLE_EQ(run.components[1], 0.1);
  EXPECT_DOUBLE_EQ(run.iteration_s, 1.0);
}

TEST(RunFile, ReadsTheNodeItsRanksShared) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  MeasuredRun run = measured_run_from_json(root, "run.json");
  EXPECT_EQ(run.node_ranks, 0);
  EXPECT_FALSE(ranks_shared_cores(run));  // not known
  root["node"] = {{"ranks", 4}, {"cores", 2}};
  run = measured_run_from_json(root, "run.json");
  EXPECT_EQ(run.node_ranks, 4);
  EXPECT_EQ(run.node_cores, 2);
  EXPECT_TRUE(ranks_shared_cores(run));
  root["node"]["cores"] = 4;
  EXPECT_FALSE(ranks_shared_cores(measured_run_from_json(root, "run.json")));

  root["node"]["cores"] = 0;
  EXPECT_EQ(error_of(root), "run.json: node.cores: expected a positive integer, got number 0");
  root["node"] = {{"cores", 2}};
  EXPECT_EQ(error_of(root), "run.json: node.ranks: missing");
  root["node"] = "vm";
  EXPECT_EQ(error_of(root), "run.json: node: expected an object, got string \"vm\"");
}

nlohmann::json memory_rank(int64_t activations) {
  return {{"rank", 0},
          {"device_peak_bytes", 400 + activations},
          {"device_at_peak_bytes",
           {{"weights", 100}, {"gradients", 100}, {"optimizer", 200}, {"activations", activations}, {"comm_buffers", 0}}},
          {"host_bytes", 0}};
}

TEST(RunFile, ReadsThePrecisionFp32WhenAbsent) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  EXPECT_EQ(measured_run_from_json(root, "run.json").precision, Precision::fp32);
  root["precision"] = "bf16";
  EXPECT_EQ(measured_run_from_json(root, "run.json").precision, Precision::bf16);
  root["precision"] = "fp16";  // what `axo train --precision fp16` writes
  EXPECT_EQ(measured_run_from_json(root, "run.json").precision, Precision::fp16);
  root["precision"] = "fp8";
  const std::string error = error_of(root);
  EXPECT_NE(error.find("run.json: precision: expected \"fp32\", \"bf16\" or \"fp16\""), std::string::npos) << error;
}

// What the run says of itself (model, ranks, grid and its settings, offload, batch, microbatch,
// sequence, precision) against a plan: any difference names the field and both values.
TEST(RunFile, TheRunSaysWhichPlanItIsOf) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  Plan plan;
  plan.model.name = "gpt2-tiny", plan.model.global_batch = 8, plan.model.seq_len = 64;
  plan.model.precision = Precision::bf16;
  plan.gpus = 8;
  plan.config.pipeline = 2, plan.config.data = 2, plan.config.y = 2, plan.config.microbatch = 2, plan.config.zero = 1;
  plan.config.interleave = 2, plan.config.recompute = Recompute::full;
  auto mismatch = [&] { return plan_mismatch(measured_run_from_json(root, "run.json"), plan); };
  for (const char* key : {"model", "ranks", "grid"}) {  // without them any plan would pair with the run
    nlohmann::json without = root;
    without.erase(key);
    EXPECT_EQ(error_of(without), "run.json: " + std::string(key) + ": missing");
  }
  root["model"] = "gpt2-tiny", root["ranks"] = 8, root["batch"] = 8, root["microbatch"] = 2, root["seq"] = 64;
  root["precision"] = "bf16";
  root["grid"] = {{"pipeline", 2},        {"data", 2},           {"context", 1}, {"x", 1},
                  {"y", 2},               {"z", 1},              {"zero", 1},    {"interleave", 2},
                  {"recompute", "full"},  {"recompute_layers", 0}, {"sequence_parallel", "off"},
                  {"order", "xyzcdp"}};
  EXPECT_EQ(mismatch(), "");
  const std::string tail = ": pair each plan with its own run";
  root["grid"]["data"] = 4, root["grid"]["pipeline"] = 1;
  EXPECT_EQ(mismatch(), "run.json trained pipeline=1 where the plan has pipeline=2" + tail);
  root["grid"]["data"] = 2, root["grid"]["pipeline"] = 2, root["grid"]["context"] = 2;
  EXPECT_EQ(mismatch(), "run.json trained context=2 where the plan has context=1" + tail);
  root["grid"]["context"] = 1, root["grid"]["zero"] = 2;
  EXPECT_EQ(mismatch(), "run.json trained zero=2 where the plan has zero=1" + tail);
  root["grid"]["zero"] = 1, root["grid"]["interleave"] = 1;
  EXPECT_EQ(mismatch(), "run.json trained interleave=1 where the plan has interleave=2" + tail);
  root["grid"]["interleave"] = 2, root["grid"]["recompute"] = "none";
  EXPECT_EQ(mismatch(), "run.json trained recompute=none where the plan has recompute=full" + tail);
  root["grid"]["recompute"] = "full", root["grid"]["order"] = "pyxzcd";
  EXPECT_EQ(mismatch(), "run.json trained order=pyxzcd where the plan has order=xyzcdp" + tail);
  // The overlaps compared where they act: on y=2 alone OAR (the dX reduction over Y) does, ORS and
  // OAG (over Z) do not. A run without OAR is another plan's; one with OAR alone is this plan's.
  root["grid"]["order"] = "xyzcdp", root["grid"]["overlap"] = "ors,oag";
  EXPECT_EQ(mismatch(), "run.json trained overlap=ors,oag where the plan has overlap=on" + tail +
                            " (train's --overlap makes another plan's run)");
  root["grid"]["overlap"] = "oar";
  EXPECT_EQ(mismatch(), "");
  root["grid"]["overlap"] = "sometimes";
  EXPECT_NE(error_of(root).find("run.json: grid.overlap: expected none or a list of oar, ors, oag; got 'sometimes'"),
            std::string::npos)
      << error_of(root);
  root["grid"]["overlap"] = "on", root["microbatch"] = 8;
  EXPECT_EQ(mismatch(), "run.json trained microbatch=8 where the plan has microbatch=2" + tail +
                            " (train's --microbatch makes another plan's run)");
  root["microbatch"] = 2, root["model"] = "gpt2-mini";
  EXPECT_EQ(mismatch(), "run.json trained model=gpt2-mini where the plan has model=gpt2-tiny" + tail);
  root["model"] = "gpt2-tiny", root["precision"] = "fp32";
  EXPECT_EQ(mismatch(), "run.json trained precision=fp32 where the plan has precision=bf16" + tail +
                            " (train's --precision makes another plan's run)");
  // An fp8 plan the executor trained in bf16 is that plan's run.
  plan.model.precision = Precision::fp8, root["precision"] = "bf16", root["planned_precision"] = "fp8";
  EXPECT_EQ(mismatch(), "");
  // A serial run of a one-GPU plan: its rank order and ZeRO mean nothing there.
  Plan one = plan;
  one.gpus = 1, one.config = ParallelConfig{}, one.config.microbatch = 2, one.config.zero = 1;
  one.config.order = parse_order("pyxzcd", "test");
  root["ranks"] = 1;
  root["grid"] = {{"pipeline", 1}, {"data", 1}, {"x", 1}, {"y", 1}, {"z", 1}, {"zero", 0}, {"order", "xyzcdp"}};
  EXPECT_EQ(plan_mismatch(measured_run_from_json(root, "run.json"), one), "");
  root["grid"]["overlap"] = "oar";  // the overlaps mean nothing without tensor parallelism
  EXPECT_EQ(plan_mismatch(measured_run_from_json(root, "run.json"), one), "");
  root["grid"]["sequence_parallel"] = true;
  EXPECT_NE(error_of(root).find("run.json: grid.sequence_parallel: expected an integer or a name"), std::string::npos)
      << error_of(root);
  root["grid"]["sequence_parallel"] = "off", root["grid"]["context"] = -3;  // checked as --fix checks it
  EXPECT_NE(error_of(root).find("run.json: grid: context=-3"), std::string::npos) << error_of(root);
  root["grid"] = "2x2";
  EXPECT_NE(error_of(root).find("run.json: grid: expected an object"), std::string::npos) << error_of(root);
}

TEST(RunFile, ReadsTheRankWithTheLargestDevicePeak) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  EXPECT_FALSE(measured_run_from_json(root, "run.json").memory);
  root["batch"] = 8, root["microbatch"] = 2, root["seq"] = 32;
  root["memory"] = {{"offload", true}, {"ranks", {memory_rank(50), memory_rank(70), memory_rank(60)}}};
  const MeasuredRun run = measured_run_from_json(root, "run.json");
  EXPECT_EQ(run.batch, 8);
  EXPECT_EQ(run.microbatch, 2);
  EXPECT_EQ(run.seq, 32);
  ASSERT_TRUE(run.memory);
  EXPECT_TRUE(run.memory->offload);
  EXPECT_EQ(run.memory->rank, 1u);
  EXPECT_EQ(run.memory->device_peak, 470);
  EXPECT_EQ(run.memory->at_peak[3], 70);
  EXPECT_EQ(run.memory->at_peak[2], 200);
}

TEST(RunFile, BadMemoryNamesTheField) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  root["memory"] = {{"offload", false}, {"ranks", {memory_rank(50)}}};
  root["memory"]["ranks"][0]["device_peak_bytes"] = 451;
  EXPECT_EQ(error_of(root), "run.json: memory.ranks[0].device_at_peak_bytes: adds up to 450, not device_peak_bytes 451");
  root["memory"]["ranks"][0]["device_at_peak_bytes"]["activations"] = -1;
  EXPECT_EQ(error_of(root),
            "run.json: memory.ranks[0].device_at_peak_bytes.activations: expected a number of bytes >= 0, got number -1");
  root["memory"]["ranks"][0]["device_at_peak_bytes"]["activations"] = INT64_MAX;
  EXPECT_EQ(error_of(root), "run.json: memory.ranks[0].device_at_peak_bytes: too large to add up");
  root["memory"]["ranks"][0].erase("host_bytes");
  EXPECT_EQ(error_of(root), "run.json: memory.ranks[0].host_bytes: missing");
  root["memory"]["ranks"] = nlohmann::json::array();
  EXPECT_EQ(error_of(root), "run.json: memory.ranks: expected a non-empty list, got array []");
  root["memory"]["offload"] = "yes";
  EXPECT_EQ(error_of(root), "run.json: memory.offload: expected true or false, got string \"yes\"");
  root["memory"] = 3;
  EXPECT_EQ(error_of(root), "run.json: memory: expected an object, got number 3");
  root.erase("memory");
  root["seq"] = 0;
  EXPECT_EQ(error_of(root), "run.json: seq: expected a positive integer, got number 0");
}

TEST(RunFile, ReadsTheFile) {
  const testing::TemporaryFolder folder("run_file");
  const std::string path =
      folder.write("run.json", testing::run_json({{2.0, {1.5, 0, 0, 0, 0, 0, 0.5}}}).dump(2));
  const MeasuredRun run = read_run_file(path);
  EXPECT_EQ(run.source, path);
  EXPECT_DOUBLE_EQ(run.components[0], 1.5);
}

// A step of no time, or of more seconds than any run, and components that do not split their step
// are typing slips: a report or a refinement fitted to them would be nonsense.
TEST(RunFile, StepsOfNoOrEndlessTimeAreRefused) {
  nlohmann::json root = testing::run_json({{0.0, {0, 0, 0, 0, 0, 0, 0}}});
  EXPECT_EQ(error_of(root), "run.json: steps[0].iteration_s: expected a number of seconds > 0 and at most 1e+12, got 0.0");
  root = testing::run_json({{1e300, {1, 0, 0, 0, 0, 0, 0}}});
  EXPECT_NE(error_of(root).find("steps[0].iteration_s: expected a number of seconds > 0 and at most 1e+12, got 1e+300"),
            std::string::npos);
  root = testing::run_json({{1.0, {0.5, 0, 0, 0, 0, 0, 1e13}}});
  EXPECT_NE(error_of(root).find("steps[0].components_s.optimizer: expected a number of seconds >= 0 and at most 1e+12"),
            std::string::npos);
  root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}, {0.0035, {10, 0, 0, 0, 0, 0, 0}}});
  EXPECT_EQ(error_of(root), "run.json: steps[1].components_s: add up to 10.000000 s, more than twice the seconds "
                            "of the step's slowest rank (0.003500 s) they split");
  // What a run writes: components a little above rank 0's iteration, the mean over slower ranks.
  root = testing::run_json({{1.0, {1.02, 0, 0, 0, 0, 0, 0.01}}});
  EXPECT_EQ(error_of(root), "");
  // Rank 0 wrote a checkpoint after its step: the other rank waited for it in the next step's
  // collectives, and the mean of their components is over 2x rank 0's step, within the slowest's.
  root = testing::run_json({{1.0, {4.6, 0, 0, 0, 0, 0, 0}}});
  root["ranks"] = 2;
  root["steps"][0]["ranks"] = {{{"rank", 0}, {"iteration_s", 1.0}}, {{"rank", 1}, {"iteration_s", 8.0}}};
  EXPECT_EQ(error_of(root), "");
}

// A step's per-rank list holds every rank of the run: one cut short had been read as the whole run.
TEST(RunFile, AStepsRanksAreEveryRankOfTheRun) {
  nlohmann::json root = testing::run_json({{1.0, {0.5, 0, 0, 0, 0, 0, 0.1}}, {1.0, {0.5, 0, 0, 0, 0, 0, 0.1}}});
  root["ranks"] = 2;
  for (nlohmann::json& step : root["steps"]) {
    step["ranks"] = {{{"rank", 0}, {"iteration_s", 1.0}}, {{"rank", 1}, {"iteration_s", 1.0}}};
  }
  EXPECT_EQ(error_of(root), "");
  root["steps"][1]["ranks"].erase(1);
  EXPECT_EQ(error_of(root), "run.json: steps[1].ranks: 1 entries for a run of 2 ranks");
}

// Each rank's seconds are checked as the step's: the stage table adds up their compute and tp_comm,
// and a hand-edited -5 printed a negative stage time, exit 0.
TEST(RunFile, EachRanksSecondsAreChecked) {
  const auto rank_with = [](const nlohmann::json& components) {
    nlohmann::json root = testing::run_json({{1.0, {0.5, 0, 0, 0, 0, 0, 0.1}}});
    nlohmann::json rank = {{"rank", 0}, {"stage", 0}, {"iteration_s", 1.0}, {"components_s", components}};
    root["steps"][0]["ranks"] = nlohmann::json::array({rank});
    return root;
  };
  nlohmann::json parts;
  for (const char* name : kComponentNames) parts[name] = 0.1;
  EXPECT_EQ(error_of(rank_with(parts)), "");
  parts["compute"] = -5;
  EXPECT_EQ(error_of(rank_with(parts)), "run.json: steps[0].ranks[0].components_s.compute: expected a number of "
                                        "seconds >= 0 and at most 1e+12, got -5");
  parts["compute"] = "x";
  EXPECT_NE(error_of(rank_with(parts)).find("steps[0].ranks[0].components_s.compute: expected a number of seconds"),
            std::string::npos);
  parts.erase("compute");
  EXPECT_EQ(error_of(rank_with(parts)), "run.json: steps[0].ranks[0].components_s.compute: missing");
  EXPECT_NE(error_of(rank_with(7)).find("steps[0].ranks[0].components_s: expected an object of seconds"),
            std::string::npos);
  nlohmann::json root = rank_with(parts);
  root["steps"][0]["ranks"] = "all";
  EXPECT_NE(error_of(root).find("steps[0].ranks: expected a list"), std::string::npos);
}

// The first step ran is the warm-up left out: steps stored out of order would average it in.
TEST(RunFile, StepsAreInTheOrderTheyRan) {
  nlohmann::json root = testing::run_json({{9.0, {9, 0, 0, 0, 0, 0, 0}}, {1.0, {1, 0, 0, 0, 0, 0, 0}},
                                           {1.0, {1, 0, 0, 0, 0, 0, 0}}});
  EXPECT_EQ(error_of(root), "");
  std::swap(root["steps"][0], root["steps"][2]);
  EXPECT_EQ(error_of(root), "run.json: steps[1].step: 1 after step 2: the steps are out of order (the first ran is "
                            "the warm-up)");
}

TEST(RunFile, TheBackendIsCpuOrCuda) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  root["backend"] = "tpu";
  EXPECT_EQ(error_of(root), "run.json: backend: expected \"cpu\" or \"cuda\", got string \"tpu\"");
  root["backend"] = "cuda";
  EXPECT_EQ(measured_run_from_json(root, "run.json").backend, "cuda");
  MachineProfile gpu;  // backend gpu
  EXPECT_EQ(backend_mismatch(measured_run_from_json(root, "run.json"), gpu, "a100.yaml"), "");
  root["backend"] = "cpu";
  EXPECT_EQ(backend_mismatch(measured_run_from_json(root, "run.json"), gpu, "a100.yaml"),
            "run.json ran on the cpu backend, and a100.yaml describes a gpu machine: its predictions are of another "
            "machine than the run's");
  root.erase("backend");  // a run that does not say is taken at its word
  EXPECT_EQ(backend_mismatch(measured_run_from_json(root, "run.json"), gpu, "a100.yaml"), "");
}

// The schedule sets the microbatches the memory model holds in flight (memory_model.h).
TEST(RunFile, ReadsTheScheduleMessageDrivenWhenAbsent) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  EXPECT_EQ(measured_run_from_json(root, "run.json").schedule, Schedule::message_driven);
  root["schedule"] = "1f1b";
  EXPECT_EQ(measured_run_from_json(root, "run.json").schedule, Schedule::one_f_one_b);
  root["schedule"] = "gpipe";
  EXPECT_EQ(error_of(root), "run.json: schedule: expected \"message-driven\" or \"1f1b\", got string \"gpipe\"");
}

TEST(RunFile, BadFilesNameTheFileAndTheField) {
  nlohmann::json root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}, {1.0, {1, 0, 0, 0, 0, 0, 0}}});
  root["steps"][1]["components_s"].erase("bubble");
  EXPECT_EQ(error_of(root), "run.json: steps[1].components_s.bubble: missing");

  root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  root["steps"][0]["components_s"]["compute"] = "fast";
  EXPECT_EQ(error_of(root),
            "run.json: steps[0].components_s.compute: expected a number of seconds, got string \"fast\"");

  root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  root["steps"][0]["iteration_s"] = -1;
  EXPECT_NE(error_of(root).find("steps[0].iteration_s: expected a number of seconds > 0"),
            std::string::npos);

  root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  root["steps"][0].erase("iteration_s");
  EXPECT_EQ(error_of(root), "run.json: steps[0].iteration_s: missing");

  root["steps"][0] = 3;
  EXPECT_EQ(error_of(root), "run.json: steps[0]: expected an object, got number 3");

  root = testing::run_json({{1.0, {1, 0, 0, 0, 0, 0, 0}}});
  root["steps"][0]["components_s"] = nlohmann::json::array({1, 2});
  EXPECT_NE(error_of(root).find("steps[0].components_s: expected an object of seconds, got array"),
            std::string::npos);

  EXPECT_EQ(error_of(nlohmann::json::object()), "run.json: steps: missing");
  EXPECT_NE(error_of({{"steps", nlohmann::json::array()}}).find("steps: expected a non-empty list"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::array()).find("expected a JSON object"), std::string::npos);
  // Seconds whose sum would overflow are refused one by one.
  EXPECT_EQ(error_of(testing::run_json({{1e308, {1e308, 0, 0, 0, 0, 0, 0}}, {1e308, {1e308, 0, 0, 0, 0, 0, 0}}})),
            "run.json: steps[0].iteration_s: expected a number of seconds > 0 and at most 1e+12, got 1e+308");
}

TEST(RunFile, NotJsonOrMissingFileIsAnInputError) {
  const testing::TemporaryFolder folder("run_file_bad");
  auto read_error = [](const std::string& path) -> std::string {
    try {
      read_run_file(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string path = folder.write("run.json", "{\"steps\": [");
  EXPECT_NE(read_error(path).find(path + ": malformed JSON at byte"), std::string::npos) << read_error(path);
  // A number too large for a double (found by the fuzzer) is malformed too.
  const std::string huge = folder.write("huge.json", "{\"steps\": 5E333}");
  EXPECT_NE(read_error(huge).find(huge + ": malformed JSON"), std::string::npos) << read_error(huge);
  EXPECT_THROW(read_run_file(folder.file("absent.json")), InputError);
}

}  // namespace
}  // namespace axo
