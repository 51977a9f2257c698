// run.json writing (see run_json_writer.h; the format is model/run_schema.h).
#include "executor/train/run_json_writer.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "executor/parallel/process_grid.h"
#include "model/breakdown.h"
#include "model/config_fields.h"
#include "model/run_schema.h"

namespace axo {

namespace {

using Json = nlohmann::ordered_json;
namespace key = run_json;

Json pipeline_json(const PipelineSplit& split) {
  Json chunks = Json::array();
  for (const LayerRange& r : split.chunks()) chunks.push_back({r.begin, r.end});
  return {{key::kSplit, split.text()}, {key::kChunks, chunks}};
}

// Stage `stage`'s chunks, [begin, end) layer ranges in the order the stage holds them.
Json stage_chunks_json(const PipelineSplit& split, int64_t stage) {
  Json chunks = Json::array();
  for (int64_t c = 0; c < split.interleave(); ++c) chunks.push_back({split.chunk(stage, c).begin, split.chunk(stage, c).end});
  return chunks;
}

Json memory_json(const RunDescription& run, const std::vector<RankMemory>& memory) {
  Json j = {{key::kOffload, run.offload}, {key::kDeviceLimitBytes, run.device_limit_bytes}};
  for (size_t k = 0; k < memory.size(); ++k) {
    const int64_t stage = grid_coords(run.grid, int(k)).pipeline;
    Json rank = {{key::kRank, k},
                 {key::kStage, stage},
                 {key::kChunks, stage_chunks_json(run.split, stage)},
                 {key::kDevicePeakBytes, memory[k].device_peak}};
    for (int i = 0; i < kDeviceUses; ++i) {
      rank[key::kDeviceAtPeakBytes][kMemoryNames[size_t(i)]] = memory[k].device_peak_by_use[size_t(i)];
    }
    rank[key::kHostBytes] = memory[k].host;
    j[key::kRanks].push_back(rank);
  }
  return j;
}

// Each rank's components, its tensor-parallel seconds by kind and its step seconds (StepRecord::ranks).
Json rank_step_json(const RunDescription& run, size_t k, const std::array<double, 11>& values) {
  Json rank = {{key::kRank, k}, {key::kStage, grid_coords(run.grid, int(k)).pipeline}};
  for (size_t i = 0; i < kComponentNames.size(); ++i) rank[key::kComponentsS][kComponentNames[i]] = values[i];
  rank[key::kTpCommByKindS] = {{"all_gather", values[7]}, {"all_reduce", values[8]}, {"reduce_scatter", values[9]}};
  rank[key::kIterationS] = values[10];
  return rank;
}

Json step_json(const RunDescription& run, const StepRecord& r) {
  Json step = {{key::kStep, r.step},         {key::kLoss, r.loss},
               {key::kLr, r.lr},             {key::kGradNorm, r.grad_norm},
               {key::kIterationS, r.seconds}, {key::kTokensPerS, r.tokens_per_s},
               {key::kGflops, r.gflops}};
  if (r.val_loss >= 0) step[key::kValLoss] = r.val_loss;
  const OpTimes& ops = r.times.ops;
  step[key::kOpsS] = {{"gemm", ops.gemm},         {"attention", ops.attention}, {"layernorm", ops.layernorm},
                      {"gelu", ops.gelu},         {"embedding", ops.embedding}, {"loss", ops.loss},
                      {"residual", ops.residual}, {"optimizer", r.times.optimizer}};
  // The planner's components: the mean over ranks, then each rank's.
  for (size_t i = 0; i < kComponentNames.size(); ++i) {
    double sum = 0;
    for (const auto& rank : r.ranks) sum += rank[i];
    step[key::kComponentsS][kComponentNames[i]] = sum / double(r.ranks.size());
  }
  for (size_t k = 0; k < r.ranks.size(); ++k) step[key::kRanks].push_back(rank_step_json(run, k, r.ranks[k]));
  return step;
}

}  // namespace

std::string run_json_text(const RunDescription& run, const std::vector<RankMemory>& memory,
                          const std::vector<StepRecord>& steps) {
  const ParallelConfig& g = run.grid;
  Json j;
  j[key::kModel] = run.model;
  j[key::kBackend] = key::kCpuBackend;
  j[key::kRanks] = run.ranks;
  j[key::kGrid] = {{"pipeline", g.pipeline}, {"data", g.data}, {"z", g.z}, {"y", g.y}, {"x", g.x}};
  for (const char* name : key::kGridSettings) {
    const ConfigField& field = config_field(name);
    const FieldValue value = field.get(g);
    const std::string text = field.text(value);
    const bool number = field.kind == FieldKind::count || std::isdigit(static_cast<unsigned char>(text[0]));
    j[key::kGrid][name] = number ? Json(value) : Json(text);  // zero's choices are digits: a number
  }
  j[key::kGrid][key::kOverlap] = run.overlap;
  j[key::kSchedule] = to_string(run.schedule);
  j[key::kPipeline] = pipeline_json(run.split);
  if (run.node_cores > 0) j[key::kNode] = {{key::kRanks, run.node_ranks}, {key::kCores, run.node_cores}};
  j[key::kBatch] = run.batch;
  j[key::kMicrobatch] = run.microbatch;
  j[key::kSeq] = run.seq;
  j[key::kParameters] = run.parameters;
  j[key::kPrecision] = to_string(run.precision);
  if (run.planned_precision) j[key::kPlannedPrecision] = to_string(*run.planned_precision);
  j[key::kMemory] = memory_json(run, memory);
  j[key::kSteps] = Json::array();
  for (const StepRecord& r : steps) j[key::kSteps].push_back(step_json(run, r));
  return j.dump(2) + "\n";
}

}  // namespace axo
