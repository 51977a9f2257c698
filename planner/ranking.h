// What the planner ranks configurations by (`axo plan --rank-by`):
//   iteration  the iteration time (the default);
//   goodput    the fraction of wall time that trains under failures and
//              checkpoints (model/goodput.h), highest first, to 1e-4 (as
//              the table shows it);
//   cost       GPU-hours per iteration of work, iteration time / goodput:
//              with a fixed GPU count, proportional to train_days and cost.
// Ties go to the faster iteration. Each key has a lower bound from a
// configuration's compute time alone, for the search's branch and bound.
#pragma once

#include <string>
#include <vector>

#include "model/cost_model.h"
#include "model/goodput.h"

namespace axo {

enum class RankBy { iteration, goodput, cost };

const char* to_string(RankBy by);
// Throws InputError naming the choices.
RankBy parse_rank_by(const std::string& text);

// The key a configuration is ranked by (smaller first).
double rank_key(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig& config,
                double iteration_s);
// A lower bound on rank_key for a configuration whose compute alone takes
// `compute_s` (its iteration takes at least that long).
double rank_key_bound(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig& config,
                      double compute_s);

}  // namespace axo
