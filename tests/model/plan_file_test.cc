// plan.yaml round trip and validation.
#include "model/plan_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/cost_model.h"
#include "model/error.h"
#include "model/presets.h"
#include "tests/input_error_of.h"
#include "tests/model/config_field_samples.h"

namespace axo {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("axo_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(PlanFile, RoundTrip) {
  Plan plan;
  plan.model = load_model("gpt2-124m");
  plan.machine = "selene";
  plan.config.pipeline = 2, plan.config.y = 2, plan.config.data = 2, plan.config.microbatch = 4;
  plan.gpus = 8;
  plan.predicted.iter_time = 1.25;
  plan.predicted.compute = 1.0, plan.predicted.tp_comm = 0.25;
  plan.predicted.memory.weights = 3.0 * (1 << 30);
  const std::string path = temp_path("plan.yaml");
  write_plan_file(plan, path);
  const Plan back = read_plan_file(path);
  EXPECT_EQ(back.config, plan.config);
  EXPECT_EQ(back.model.parameter_count(), plan.model.parameter_count());
  EXPECT_EQ(back.gpus, 8);
  EXPECT_DOUBLE_EQ(back.predicted.iter_time, 1.25);
  EXPECT_DOUBLE_EQ(back.predicted.tp_comm, 0.25);
  EXPECT_NEAR(back.predicted.memory.weights, 3.0 * (1 << 30), 1);
  EXPECT_EQ(back.iter_time_high_s, 0);  // none written
  EXPECT_EQ(back.band, "");
  std::remove(path.c_str());
}

// The error band `axo plan` printed travels with the prediction (above it, where every run of the
// GPU type ran slower than predicted); a high limit below the low one is refused.
TEST(PlanFile, BandRoundTripsAndHoldsThePrediction) {
  Plan plan;
  plan.model = load_model("gpt2-124m");
  plan.machine = "selene";
  plan.gpus = 1;
  plan.predicted.iter_time = 1.25;
  plan.iter_time_low_s = 1.1, plan.iter_time_high_s = 1.4;
  plan.band = "-12% / +12%: 90% of 87 published A100-80 runs";
  const std::string path = temp_path("band.yaml");
  write_plan_file(plan, path);
  const Plan back = read_plan_file(path);
  EXPECT_DOUBLE_EQ(back.iter_time_low_s, 1.1);
  EXPECT_DOUBLE_EQ(back.iter_time_high_s, 1.4);
  EXPECT_EQ(back.band, plan.band);
  plan.iter_time_low_s = 1.3;  // above the prediction
  write_plan_file(plan, path);
  EXPECT_DOUBLE_EQ(read_plan_file(path).iter_time_low_s, 1.3);
  plan.iter_time_low_s = 1.5;  // above the high limit
  write_plan_file(plan, path);
  EXPECT_NE(testing::input_error_of([&] { read_plan_file(path); }).find("field 'iter_time_high_s'"), std::string::npos);
  std::remove(path.c_str());
}

TEST(PlanFile, EveryConfigurationFieldRoundTrips) {
  for (const ConfigField& field : config_fields()) {
    for (FieldValue value : testing::sample_values(field)) {
      Plan plan;
      plan.model = load_model("gpt2-124m");
      plan.machine = "selene";
      field.set(plan.config, value);
      plan.gpus = plan.config.gpus();
      const std::string path = temp_path("field.yaml");
      write_plan_file(plan, path);
      // A value the model cannot be built with (pipeline=64 of 12 layers) is refused as check() says.
      const std::string problem = CostModel(plan.model, load_machine("selene")).check(plan.config);
      if (problem.empty()) {
        EXPECT_EQ(read_plan_file(path).config, plan.config) << field.name << "=" << field.text(value);
      } else {
        EXPECT_NE(testing::input_error_of([&] { read_plan_file(path); }).find("field 'config': " + problem),
                  std::string::npos)
            << field.name << "=" << field.text(value);
      }
      std::remove(path.c_str());
    }
  }
}

// What the model cannot be built with, which train would otherwise run (sequence parallelism
// with y=1 trained a model that never learned), and a pipeline_split other than axo's.
TEST(PlanFile, AConfigurationTheModelCannotRunIsRefused) {
  const std::string path = temp_path("edited.yaml");
  Plan plan;
  plan.model = load_model("gpt2-tiny");
  plan.machine = "selene";
  plan.config.data = 2, plan.config.microbatch = 2, plan.gpus = 2;
  write_plan_file(plan, path);
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const std::string good = text.str();
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string changed = good;
    const size_t at = changed.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    std::ofstream(path) << changed.replace(at, from.size(), to);
    return testing::input_error_of([&] { read_plan_file(path); });
  };
  EXPECT_NE(edited("sequence_parallel: false", "sequence_parallel: true").find("field 'config': sequence parallelism"),
            std::string::npos);
  EXPECT_NE(edited("interleave: 1", "interleave: 2").find("interleave=2 needs pipeline>1"), std::string::npos);
  plan.config.data = 1, plan.config.pipeline = 2;
  write_plan_file(plan, path);
  text.str("");
  text << std::ifstream(path).rdbuf();
  std::string split = text.str();
  ASSERT_NE(split.find("pipeline_split: 1,1"), std::string::npos) << split;
  std::ofstream(path) << split.replace(split.find("pipeline_split: 1,1"), 19, "pipeline_split: 2,0");
  EXPECT_NE(testing::input_error_of([&] { read_plan_file(path); })
                .find("field 'pipeline_split': '2,0' is not the split axo runs for this plan (1,1)"),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(PlanFile, GridMustMatchGpus) {
  const std::string path = temp_path("bad_plan.yaml");
  std::ofstream(path) << "axo_plan: 1\nmodel: {name: m, layers: 2, hidden: 8, heads: 2, seq_len: 4, vocab: 16, global_batch: 2}\n"
                         "machine: selene\ngpus: 4\nconfig: {pipeline: 2, data: 1, x: 1, y: 1, z: 1, microbatch: 1}\n";
  try {
    read_plan_file(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline*data*context*z*y*x = 2 does not equal gpus = 4"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace axo
