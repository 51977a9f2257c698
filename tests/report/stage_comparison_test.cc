// Predicted against measured per pipeline stage: run.json's ranks grouped by
// stage, the memory model's stage by stage, the cost model's layers and ends.
#include "report/stage_comparison.h"

#include <gtest/gtest.h>

#include "model/cost_model.h"
#include "model/error.h"
#include "model/memory_model.h"
#include "model/presets.h"
#include "model/stage_partition.h"
#include "report/memory_comparison.h"
#include "tests/report/report_test_files.h"

namespace axo {
namespace {

TEST(StageComparison, PredictsEachStageFromItsLayersAndEnds) {
  Plan plan = testing::one_gpu_plan(testing::breakdown_of(1, 0, 0, 0, 0, 0, 0));
  plan.gpus = 4, plan.config.pipeline = 2, plan.config.data = 2, plan.config.microbatch = 1;
  plan.predicted.layer_forward = 0.001, plan.predicted.layer_backward = 0.002;
  MeasuredRun run;
  const std::vector<MeasuredStage> measured = measured_stages(testing::two_stage_run(), "run.json", 2);
  const MachineProfile machine = load_machine("perlmutter");
  const StageComparison with_ends = compare_stages(plan, run, measured, machine);
  const StageComparison layers_only = compare_stages(plan, run, measured, std::nullopt);
  ASSERT_EQ(with_ends.rows.size(), 2u);
  EXPECT_TRUE(with_ends.ends_known);
  EXPECT_FALSE(layers_only.ends_known);
  const PipelineSplit split = split_pipeline(plan_as_run(plan, run).model, 2, 1);
  const double m = double(plan.model.global_batch) / 2.0;
  for (int64_t s = 0; s < 2; ++s) {
    const StageRow& row = layers_only.rows[size_t(s)];
    EXPECT_EQ(row.layers, std::to_string(split.stage_layers(s)));
    EXPECT_DOUBLE_EQ(row.predicted_s, m * double(split.stage_layers(s)) * 0.003);
    // The embedding on the first stage, the head and the loss on the last: more than the layers alone.
    EXPECT_GT(with_ends.rows[size_t(s)].predicted_s, row.predicted_s);
    EXPECT_DOUBLE_EQ(row.measured_s, measured[size_t(s)].work_s());
    const Plan as_run = plan_as_run(plan, run);
    EXPECT_DOUBLE_EQ(row.predicted_bytes,
                     stage_memory(as_run.model, as_run.config, split, s, executor_memory_stack()).total());
    EXPECT_DOUBLE_EQ(row.measured_bytes, double(measured[size_t(s)].device_peak));
    ASSERT_TRUE(row.time_error_pct);
    EXPECT_DOUBLE_EQ(*row.time_error_pct, 100 * (row.measured_s - row.predicted_s) / row.predicted_s);
  }
  const std::string table = stage_comparison_table(layers_only);
  EXPECT_NE(table.find("stage  layers"), std::string::npos) << table;
  EXPECT_NE(table.find("leaves out the embedding and the head"), std::string::npos) << table;
  EXPECT_EQ(stage_comparison_table(with_ends).find("leaves out"), std::string::npos);
}

// A plan read from plan.yaml holds no per-layer seconds: the machine it was priced on prices the
// layers as it does the ends (they were 0, the stages all but empty); without it nothing is predicted.
TEST(StageComparison, APlanWithoutLayerSecondsIsPricedOnItsMachineOrNotAtAll) {
  Plan plan = testing::one_gpu_plan(testing::breakdown_of(1, 0, 0, 0, 0, 0, 0));
  plan.gpus = 4, plan.config.pipeline = 2, plan.config.data = 2, plan.config.microbatch = 1;
  ASSERT_EQ(plan.predicted.layer_forward + plan.predicted.layer_backward, 0);
  MeasuredRun run;
  const std::vector<MeasuredStage> measured = measured_stages(testing::two_stage_run(), "run.json", 2);
  const MachineProfile machine = load_machine("perlmutter");
  const Breakdown priced = CostModel(plan.model, machine).evaluate(plan.config);
  ASSERT_GT(priced.layer_forward + priced.layer_backward, 0);
  Plan costed = plan;  // as --machine leaves it: its breakdown priced there, the layers included
  costed.predicted = priced;
  const StageComparison from_machine = compare_stages(plan, run, measured, machine);
  const StageComparison from_breakdown = compare_stages(costed, run, measured, machine);
  EXPECT_TRUE(from_machine.times_known);
  EXPECT_TRUE(from_machine.ends_known);
  const PipelineSplit split = split_pipeline(plan_as_run(plan, run).model, 2, 1);
  const double m = double(plan.model.global_batch) / 2.0;
  for (size_t s = 0; s < 2; ++s) {
    const StageRow& row = from_machine.rows[s];
    // The stage's layers, and its end (the embedding on stage 0, the head on stage 1).
    EXPECT_GT(row.predicted_s, m * double(split.stage_layers(int64_t(s))) * (priced.layer_forward + priced.layer_backward));
    EXPECT_DOUBLE_EQ(row.predicted_s, from_breakdown.rows[s].predicted_s);
    ASSERT_TRUE(row.time_error_pct);
    EXPECT_DOUBLE_EQ(*row.time_error_pct, 100 * (row.measured_s - row.predicted_s) / row.predicted_s);
  }
  const StageComparison unpriced = compare_stages(plan, run, measured, std::nullopt);
  EXPECT_FALSE(unpriced.times_known);
  EXPECT_FALSE(unpriced.ends_known);
  for (const StageRow& row : unpriced.rows) {
    EXPECT_FALSE(row.time_error_pct) << row.stage;
    EXPECT_GT(row.predicted_bytes, 0) << row.stage;  // the memory model needs no machine
  }
  const std::string table = stage_comparison_table(unpriced);
  EXPECT_NE(table.find("\n0      1                 n/a     0.305000      n/a"), std::string::npos) << table;
  EXPECT_NE(table.find("no per-stage seconds are predicted"), std::string::npos) << table;
  EXPECT_EQ(table.find("0.000000"), std::string::npos) << table;
  EXPECT_EQ(stage_comparison_table(from_machine).find("n/a"), std::string::npos);
}

// Issue: the component table compared the slowest stage's predicted compute with the mean over
// every rank's measured one (a faster stage computes less and waits more: a tester's pipeline run
// read compute -72% where its slowest stage compared -44%). The pace stage is the one the model
// prices slowest, and the run's components become that stage's ranks' means.
TEST(StageComparison, TheRunIsComparedOnTheStageThatSetsThePace) {
  Plan plan = testing::one_gpu_plan(testing::breakdown_of(1, 0, 0, 0, 0, 0, 0));
  plan.gpus = 4, plan.config.pipeline = 2, plan.config.data = 2, plan.config.microbatch = 1;
  const std::vector<MeasuredStage> measured = measured_stages(testing::two_stage_run(), "run.json", 2);
  EXPECT_NEAR(measured[1].components[0], 0.4 + 0.025, 1e-12);  // compute: ranks 2 and 3's mean
  EXPECT_NEAR(measured[1].components[1], 0.1, 1e-12);           // tp_comm
  const StageComparison priced = compare_stages(plan, MeasuredRun{}, measured, load_machine("perlmutter"));
  const std::optional<int64_t> pace = pace_stage(priced);
  ASSERT_TRUE(pace);
  for (const StageRow& row : priced.rows) EXPECT_LE(row.predicted_s, priced.rows[size_t(*pace)].predicted_s);
  // Either stage can be the slower (the split balances the ends): make each the slower in turn.
  for (int64_t slow : {0, 1}) {
    StageComparison comparison = priced;
    comparison.rows[size_t(slow)].predicted_s = 2 * comparison.rows[size_t(1 - slow)].predicted_s;
    EXPECT_EQ(pace_stage(comparison), slow);
  }
  StageComparison tie = priced;
  tie.rows[1].predicted_s = tie.rows[0].predicted_s;
  EXPECT_EQ(pace_stage(tie), 0);  // the first on a tie, as the cost model's slowest_stage
  EXPECT_FALSE(pace_stage(compare_stages(plan, MeasuredRun{}, measured, std::nullopt)));  // no stage seconds

  MeasuredRun run;
  run.components = {0.3, 0.1, 0.5, 0, 0, 0, 0.1};
  run.iteration_s = 1.0;
  const MeasuredRun on_stage = run_on_stage(run, measured[1]);
  EXPECT_EQ(on_stage.components, measured[1].components);
  EXPECT_EQ(on_stage.iteration_s, 1.0);  // the iteration is every stage's
  EXPECT_EQ(run_on_stage(run, MeasuredStage{}).components, run.components);  // a stage without ranks
}

// stage_run takes the stages the run was read with: the pace stage, and the run on it.
TEST(StageComparison, AStagedRunIsTheRunOnItsPaceStage) {
  Plan plan = testing::one_gpu_plan(testing::breakdown_of(1, 0, 0, 0, 0, 0, 0));
  plan.gpus = 4, plan.config.pipeline = 2, plan.config.data = 2, plan.config.microbatch = 1;
  nlohmann::json root = testing::two_stage_run();
  testing::run_of(root, plan);
  for (auto& step : root["steps"]) {
    for (const char* component : kComponentNames) step["components_s"][component] = 0.0;
    step["components_s"]["compute"] = 0.3;
  }
  const MeasuredRun run = measured_run_from_json(root, "run.json");
  ASSERT_EQ(run.components[0], 0.3);
  const StagedRun staged = stage_run(plan, run, load_machine("perlmutter"));
  ASSERT_TRUE(staged.pace);
  EXPECT_EQ(staged.run.components, run.stages[size_t(*staged.pace)].components);
  EXPECT_EQ(staged.comparison.rows.size(), 2u);
  const StagedRun unpriced = stage_run(plan, run, std::nullopt);
  EXPECT_FALSE(unpriced.pace);
  EXPECT_EQ(unpriced.run.components, run.components);  // the mean over every rank, as read
  // Steps without ranks: no stage's seconds to compare with.
  for (auto& step : root["steps"]) step.erase("ranks");
  const MeasuredRun without_ranks = measured_run_from_json(root, "run.json");
  const StagedRun unstaged = stage_run(plan, without_ranks, load_machine("perlmutter"));
  EXPECT_FALSE(unstaged.pace);
  EXPECT_EQ(unstaged.run.components, run.components);
  // A run of another pipeline than the plan's: said, not read out of range.
  Plan three = plan;
  three.config.pipeline = 3;
  EXPECT_THROW(stage_run(three, run, std::nullopt), InputError);
}

}  // namespace
}  // namespace axo
