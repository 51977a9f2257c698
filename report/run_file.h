// Reading a run.json written by `axo train` (executor/train/trainer.cc) into
// the measured seconds per planner component.
//
// A run.json holds `steps`, a list of objects each with `iteration_s` and
// `components_s`, an object with one number per name in kComponentNames
// (model/breakdown.h). The measured value of a component is its mean over
// the steps, leaving out the first step when there are three or more (it
// pays for warm-up: page faults, allocator growth, cold caches). An optional
// `node` object holds `ranks` and `cores`, positive integers: how many ranks
// ran on each node and how many cores it had. Other keys, at the top or in a
// step (the parallel executor adds `ranks`, `schedule`, `grid`), are ignored.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <string>

#include "model/breakdown.h"

namespace axo {

struct MeasuredRun {
  std::string source;                 // the file it was read from
  std::array<double, 7> components{}; // mean seconds, in kComponentNames order
  double iteration_s = 0;             // mean seconds per iteration
  size_t steps = 0;                   // steps in the file
  size_t steps_used = 0;              // steps averaged (steps, or steps - 1 without warm-up)
  int64_t node_ranks = 0, node_cores = 0;  // from `node`; 0 where the file does not say
};

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

}  // namespace axo
