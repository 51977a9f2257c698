// What the planner ranks configurations by (`axo plan --rank-by`):
//   iteration  the iteration time (the default);
//   cost       GPU-hours per iteration of work, iteration time / goodput
//              (model/goodput.h): with a fixed GPU count, proportional to
//              train_days and cost; the ranking under failures.
// Goodput alone is no ranking: it hardly differs between splits of one job
// (it follows the GPU count, the failure rate and the checkpoint's size,
// which the split barely changes), so ranking by it ranked slow plans first
// on the rounding of their checkpoint intervals; `goodput` is refused,
// naming `cost`. Each key has a lower bound from a configuration's compute
// time alone, for the search's branch and bound.
#pragma once

#include <string>
#include <vector>

#include "model/cost_model.h"
#include "model/goodput.h"

namespace axo {

enum class RankBy { iteration, cost };

const char* to_string(RankBy by);
// Throws InputError naming the choices (and, for goodput, why it is not one).
RankBy parse_rank_by(const std::string& text);

// The key a configuration is ranked by (smaller first).
double rank_key(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig& config,
                double iteration_s);
// A lower bound on rank_key for a configuration whose compute alone takes
// `compute_s` (its iteration takes at least that long).
double rank_key_bound(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig& config,
                      double compute_s);

}  // namespace axo
