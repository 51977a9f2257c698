// Reading a run.json written by `axo train` (executor/train/trainer.cc) into
// the measured seconds per planner component.
//
// The format is model/run_schema.h. The measured value of a component is
// its mean over the steps, leaving out the first step when there are three
// or more (it pays for warm-up: page faults, allocator growth, cold caches).
// Read and checked: steps (iteration_s, components_s, the step numbers' order), model, ranks and
// grid (required: they pair the run with its plan), and where present node, backend, batch,
// microbatch, seq, precision and memory; with a pipeline, the steps' and memory's ranks by stage
// (run_stages.h); other keys are ignored.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/breakdown.h"
#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/plan_file.h"
#include "model/schedule.h"
#include "model/transformer_spec.h"
#include "report/run_stages.h"

namespace axo {

// The device memory of the run's rank with the largest peak.
struct MeasuredMemory {
  bool offload = false;
  size_t rank = 0;
  int64_t device_peak = 0;             // bytes
  std::array<int64_t, 5> at_peak{};    // bytes at that peak, in kMemoryNames order
  int64_t host = 0;                    // bytes of offloaded state in host memory
};

struct MeasuredRun {
  std::string source;                 // the file it was read from
  std::array<double, 7> components{}; // mean seconds, in kComponentNames order
  double iteration_s = 0;             // mean seconds per iteration
  size_t steps = 0;                   // steps in the file
  size_t steps_used = 0;              // steps averaged (steps, or steps - 1 without warm-up)
  int64_t node_ranks = 0, node_cores = 0;  // from `node`; 0 where the file does not say
  std::string model;                  // the model's name
  std::string backend;                // "cpu" or "cuda"; empty where the file does not say
  int64_t ranks = 0;
  int64_t batch = 0, microbatch = 0, seq = 0;  // 0 where the file does not say
  Precision precision = Precision::fp32;       // the run's (fp32 where the file does not say)
  bool precision_stated = false;               // whether the file says
  std::optional<Precision> planned_precision;  // the plan's, where the executor trained another (fp8 in bf16)
  ParallelConfig grid;                         // pipeline, data, z, y, x (the rest default)
  // The grid's settings the file records (run_schema.h's kGridSettings), as --fix spells them.
  std::map<std::string, std::string> settings;
  std::optional<MeasuredMemory> memory;
  Schedule schedule = Schedule::message_driven;  // the pipeline's (the executor's default where the file does not say)
  std::vector<MeasuredStage> stages;             // per pipeline stage where the grid has several (run_stages.h)
};

// Empty, or why `run` is not a run of `plan`: another model, rank count, grid (pipeline, data,
// z, y, x and its recorded settings: context, zero, interleave, recompute, sequence parallelism,
// order, the overlaps where they act: model/overlap.h), offload, batch, microbatch, sequence or
// precision (the last five where the file says). Predictions and
// refinements of the plan would otherwise be compared with another run.
std::string plan_mismatch(const MeasuredRun& run, const Plan& plan);

// Empty, or why `run` is not a run on `profile`'s kind of machine: a run on CPU ranks priced on a
// GPU profile (backend gpu), or a CUDA run on a CPU one, where the file says.
std::string backend_mismatch(const MeasuredRun& run, const MachineProfile& profile, const std::string& profile_path);

// Whether more ranks than cores ran on a node: each rank's time waiting in
// collectives then includes the time its peers were not running, which the
// model counts as their compute (so components differ while totals agree).
bool ranks_shared_cores(const MeasuredRun& run);

// Throws InputError naming the file and the field (e.g.
// "run.json: steps[2].components_s.bubble: expected a number, got \"x\"")
// when the file cannot be read, is not JSON, or lacks a field.
MeasuredRun read_run_file(const std::string& path);
// Same, from parsed JSON; `source` names it in messages.
MeasuredRun measured_run_from_json(const nlohmann::json& root, const std::string& source);
// read_run_file, refused (InputError naming both files) when plan_mismatch finds a difference.
MeasuredRun read_run_of(const std::string& path, const Plan& plan, const std::string& plan_path);

}  // namespace axo
