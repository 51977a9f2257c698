// What `axo validate` prints and writes: error statistics per source and GPU
// type, the runs axo cannot express and why, the runs the memory model says
// do not fit.
#pragma once

#include <string>
#include <vector>

#include "planner/validation.h"

namespace axo {

// Over errors e_i in percent: count, mean |e|, the e with the largest |e|
// (sign kept), and the mean e (signed bias; positive = predicted too slow).
struct ErrorStats {
  int count = 0;
  double mean_abs_pct = 0;
  double worst_pct = 0;
  double bias_pct = 0;
};
ErrorStats error_stats(const std::vector<double>& errors_pct);

struct GroupStats {
  std::string source, gpu;
  ErrorStats stats;
};
// Expressed entries grouped by (source, GPU type), in order of first appearance.
std::vector<GroupStats> summarize(const std::vector<ValidationEntry>& entries);

std::string summary_table(const std::vector<GroupStats>& groups);
// Unexpressed entries grouped by reason, each reason with its count and names.
std::string unexpressed_list(const std::vector<ValidationEntry>& entries);
// Expressed iteration-time entries (runs, not a set's per-layer timings) whose
// predicted memory exceeds the GPU's usable memory.
std::string memory_misses(const std::vector<ValidationEntry>& entries);

}  // namespace axo
