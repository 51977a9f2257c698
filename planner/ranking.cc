// Ranking keys of the search (see ranking.h).
#include "planner/ranking.h"

#include <cmath>
#include <limits>

#include "model/error.h"

namespace axo {

const char* to_string(RankBy by) {
  switch (by) {
    case RankBy::iteration: return "iteration";
    case RankBy::cost: return "cost";
  }
  return "?";
}

RankBy parse_rank_by(const std::string& text) {
  for (RankBy by : {RankBy::iteration, RankBy::cost}) {
    if (text == to_string(by)) return by;
  }
  if (text == "goodput") {
    throw InputError("--rank-by goodput: the goodput hardly differs between splits of one job (it follows the GPUs, "
                     "the failure rate and the checkpoint's size); --rank-by cost ranks by iteration time / goodput");
  }
  throw InputError("--rank-by: expected iteration or cost, got '" + text + "'");
}

namespace {

// Iteration seconds per fraction of wall time that trains; infinite when nothing trains.
double seconds_per_goodput(double iteration_s, double goodput) {
  return goodput > 0 ? iteration_s / goodput : std::numeric_limits<double>::infinity();
}

}  // namespace

double rank_key(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig& config,
                double iteration_s) {
  if (by == RankBy::iteration) return iteration_s;
  const double state = checkpoint_state_bytes(model.spec(), config);
  return seconds_per_goodput(iteration_s, goodput(state, iteration_s, gpus, model.machine()).goodput);
}

double rank_key_bound(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig&,
                      double compute_s) {
  if (by == RankBy::iteration) return compute_s;
  return seconds_per_goodput(compute_s, goodput_upper_bound(gpus, model.machine()));
}

}  // namespace axo
