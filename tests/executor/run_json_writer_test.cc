// run.json as the trainer writes it (executor/train/run_json_writer.h) is
// what the report reads (report/run_file.h): one schema, model/run_schema.h.
#include "executor/train/run_json_writer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/config_fields.h"
#include "report/run_file.h"

namespace axo {
namespace {

RunDescription two_stage_run() {
  RunDescription run;
  run.model = "gpt2-tiny", run.ranks = 4;
  run.grid.pipeline = 2, run.grid.data = 2;
  run.split = PipelineSplit({{0, 3}, {3, 4}}, 2);
  run.node_ranks = 4, run.node_cores = 2;
  run.batch = 8, run.microbatch = 2, run.seq = 32, run.parameters = 1000;
  return run;
}

StepRecord step(int64_t number, double seconds) {
  StepRecord r;
  r.step = number, r.loss = 5.0, r.seconds = seconds;
  for (int k = 0; k < 4; ++k) {
    std::array<double, 11> values{};
    values[0] = 0.5 * seconds, values[10] = seconds;
    r.ranks.push_back(values);
  }
  return r;
}

TEST(RunJsonWriter, TheReportReadsWhatTheTrainerWrites) {
  std::vector<RankMemory> memory(4);
  for (int k = 0; k < 4; ++k) memory[size_t(k)].device_peak = memory[size_t(k)].device_peak_by_use[0] = 100 + k;
  const std::string text = run_json_text(two_stage_run(), memory, {step(1, 2.0), step(2, 1.0), step(3, 1.0)});
  const MeasuredRun run = measured_run_from_json(nlohmann::json::parse(text), "run.json");
  EXPECT_EQ(run.steps, 3u);
  EXPECT_EQ(run.steps_used, 2u);  // the warm-up step left out
  EXPECT_DOUBLE_EQ(run.iteration_s, 1.0);
  EXPECT_DOUBLE_EQ(run.components[0], 0.5);
  EXPECT_EQ(run.node_cores, 2);
  EXPECT_EQ(run.microbatch, 2);
  ASSERT_TRUE(run.memory.has_value());
  EXPECT_EQ(run.memory->device_peak, 103);
  EXPECT_EQ(run.memory->rank, 3u);
}

// The grid's settings as --fix spells them, zero and the counts as numbers, and the overlaps run; the
// report reads them back as the plan's text for the same fields.
TEST(RunJsonWriter, RecordsTheGridsSettingsAndTheOverlapsRun) {
  RunDescription run = two_stage_run();
  run.grid.zero = 1, run.grid.recompute = Recompute::full, run.overlap = "oar,oag";
  const std::string text = run_json_text(run, std::vector<RankMemory>(4), {step(1, 1.0)});
  const nlohmann::json grid = nlohmann::json::parse(text)["grid"];
  EXPECT_EQ(grid["zero"], 1);
  EXPECT_EQ(grid["context"], 1);
  EXPECT_EQ(grid["recompute"], "full");
  EXPECT_EQ(grid["sequence_parallel"], "off");
  EXPECT_EQ(grid["overlap"], "oar,oag");
  const MeasuredRun read = measured_run_from_json(nlohmann::json::parse(text), "run.json");
  EXPECT_EQ(read.settings.at("zero"), "1");
  EXPECT_EQ(read.settings.at("overlap"), "oar,oag");
  EXPECT_EQ(read.settings.at("order"), config_field("order").text(config_field("order").get(run.grid)));
}

TEST(RunJsonWriter, RecordsTheLayerSplitAndEachRanksStage) {
  const nlohmann::json j = nlohmann::json::parse(run_json_text(two_stage_run(), std::vector<RankMemory>(4), {step(1, 1.0)}));
  EXPECT_EQ(j["pipeline"]["split"], "3,1");
  EXPECT_EQ(j["pipeline"]["chunks"], nlohmann::json::parse("[[0,3],[3,4]]"));
  // Rank order xyzdp: data varies before pipeline, so ranks 0, 1 are stage 0 and 2, 3 stage 1.
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(j["steps"][0]["ranks"][k]["stage"], k / 2) << k;
    EXPECT_EQ(j["memory"]["ranks"][k]["stage"], k / 2) << k;
  }
}

TEST(RunJsonWriter, RecordsEachRanksChunksOfAnInterleavedSplit) {
  RunDescription run = two_stage_run();
  run.grid.interleave = 2;
  // Stage 0 holds the model's chunks 0 and 2, stage 1 chunks 1 and 3 (chunk k = c·stages + s); 7 layers, unequal.
  run.split = PipelineSplit({{0, 2}, {2, 4}, {4, 6}, {6, 7}}, 2);
  const nlohmann::json j = nlohmann::json::parse(run_json_text(run, std::vector<RankMemory>(4), {step(1, 1.0)}));
  EXPECT_EQ(j["pipeline"]["split"], "2+2,2+1");
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(j["memory"]["ranks"][k]["chunks"], nlohmann::json::parse(k / 2 == 0 ? "[[0,2],[4,6]]" : "[[2,4],[6,7]]"))
        << k;
  }
}

}  // namespace
}  // namespace axo
