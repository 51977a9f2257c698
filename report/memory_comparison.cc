// Predicted against measured device memory (see memory_comparison.h).
#include "report/memory_comparison.h"

#include <cstdio>

#include "model/memory_model.h"
#include "report/comparison.h"
#include "report/comparison_table.h"

namespace axo {

Plan plan_as_run(const Plan& plan, const MeasuredRun& run) {
  Plan as_run = plan;
  as_run.model.precision = run.precision;
  if (run.seq > 0) as_run.model.seq_len = run.seq;
  if (run.batch > 0) as_run.model.global_batch = run.batch;
  if (run.microbatch > 0) as_run.config.microbatch = run.microbatch;
  if (run.memory) as_run.config.offload = run.memory->offload;
  return as_run;
}

MemoryBreakdown predicted_memory(const Plan& plan, const MeasuredRun& run) {
  const Plan as_run = plan_as_run(plan, run);
  return memory_per_device(as_run.model, as_run.config, executor_memory_stack(run.schedule));
}

std::vector<MemoryRow> compare_memory(const MemoryBreakdown& predicted, const MeasuredMemory& measured) {
  const auto parts = memory_parts(predicted);
  std::vector<MemoryRow> rows;
  auto add = [&](const std::string& use, double predicted_bytes, double measured_bytes) {
    rows.push_back({use, predicted_bytes, measured_bytes, error_percent(predicted_bytes, measured_bytes)});
  };
  for (size_t i = 0; i < kMemoryNames.size(); ++i) add(kMemoryNames[i], parts[i], double(measured.at_peak[i]));
  add("total", predicted.total(), double(measured.device_peak));
  return rows;
}

std::string memory_comparison_table(const std::vector<MemoryRow>& rows) {
  std::string text;
  char line[160];
  std::snprintf(line, sizeof line, "%-12s %14s %14s %8s\n", "memory", "predicted_MiB", "measured_MiB", "error_%");
  text += line;
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const MemoryRow& row : rows) {
    std::snprintf(line, sizeof line, "%-12s %14.3f %14.3f %8s\n", row.use.c_str(), row.predicted_bytes / kMiB,
                  row.measured_bytes / kMiB, percent_text(row.error_pct).c_str());
    text += line;
  }
  return text;
}

}  // namespace axo
