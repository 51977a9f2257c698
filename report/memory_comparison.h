// Predicted against measured device memory: the memory model's bytes per
// device (model/memory_model.h) for the plan as the run trained it, and the
// bytes in use at the peak of the run's fullest rank (run.json `memory`), by
// category (kMemoryNames) and in total.
//
//   error_pct = 100 · (measured − predicted) / predicted  (absent when predicted is 0)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/breakdown.h"
#include "model/plan_file.h"
#include "report/run_file.h"

namespace axo {

struct MemoryRow {
  std::string use;  // a name of kMemoryNames, or "total"
  double predicted_bytes = 0, measured_bytes = 0;
  std::optional<double> error_pct;
};

// The plan as the run trained it: its batch, microbatch, sequence length
// (where run.json gives them), offload and precision (run.json's, fp32 where absent).
Plan plan_as_run(const Plan& plan, const MeasuredRun& run);
// The memory model for what the run trained: the plan's model and grid with
// the run's batch, microbatch, sequence length (where run.json gives them)
// offload and precision (fp32 where run.json does not say), and its pipeline schedule.
MemoryBreakdown predicted_memory(const Plan& plan, const MeasuredRun& run);
// Five rows in kMemoryNames order, then "total" (against the device peak).
std::vector<MemoryRow> compare_memory(const MemoryBreakdown& predicted, const MeasuredMemory& measured);
// A table for people, in MiB.
std::string memory_comparison_table(const std::vector<MemoryRow>& rows);

}  // namespace axo
