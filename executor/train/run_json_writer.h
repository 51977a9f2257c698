// Writing run.json, the measured record of a training run, in the format
// model/run_schema.h defines (and report/run_file.h reads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "executor/memory/device_memory.h"
#include "executor/parallel/pipeline_schedule.h"
#include "executor/train/trainer.h"
#include "model/parallel_config.h"
#include "model/stage_partition.h"

namespace axo {

// What a run was: the top-level fields of run.json.
struct RunDescription {
  std::string model;
  int ranks = 0;
  ParallelConfig grid;
  Schedule schedule = Schedule::message_driven;
  PipelineSplit split{{}, 1};
  int node_ranks = 0, node_cores = 0;  // node_cores 0: not known, no `node` written
  int64_t batch = 0, microbatch = 0, seq = 0, parameters = 0;
  bool offload = false;
  int64_t device_limit_bytes = 0;
  Precision precision = Precision::fp32;
  std::optional<Precision> planned_precision;  // asked for, where the run trained in `precision` instead
  std::string overlap = "on";  // the tensor-parallel overlaps run (run_schema.h's kOverlap)
};

// One rank's device memory (peak by use) and host memory.
struct RankMemory {
  int64_t device_peak = 0, host = 0;
  BytesByUse device_peak_by_use{};
};

// The whole run.json text; `memory` and each step's `ranks` hold one entry per world rank.
std::string run_json_text(const RunDescription& run, const std::vector<RankMemory>& memory,
                          const std::vector<StepRecord>& steps);

}  // namespace axo
