// Ranking keys of the search (see ranking.h).
#include "planner/ranking.h"

#include <cmath>
#include <limits>

#include "model/error.h"

namespace axo {

const char* to_string(RankBy by) {
  switch (by) {
    case RankBy::iteration: return "iteration";
    case RankBy::goodput: return "goodput";
    case RankBy::cost: return "cost";
  }
  return "?";
}

RankBy parse_rank_by(const std::string& text) {
  for (RankBy by : {RankBy::iteration, RankBy::goodput, RankBy::cost}) {
    if (text == to_string(by)) return by;
  }
  throw InputError("--rank-by: expected iteration, goodput or cost, got '" + text + "'");
}

namespace {

// Iteration seconds per fraction of wall time that trains; infinite when nothing trains.
double seconds_per_goodput(double iteration_s, double goodput) {
  return goodput > 0 ? iteration_s / goodput : std::numeric_limits<double>::infinity();
}

// Goodputs equal to 1e-4 (what the table shows) rank as equal: the faster iteration first.
double goodput_key(double goodput) { return -std::round(goodput * 1e4) / 1e4; }

}  // namespace

double rank_key(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig& config,
                double iteration_s) {
  if (by == RankBy::iteration) return iteration_s;
  const double state = checkpoint_state_bytes(model.spec(), config);
  const double g = goodput(state, iteration_s, gpus, model.machine()).goodput;
  return by == RankBy::goodput ? goodput_key(g) : seconds_per_goodput(iteration_s, g);
}

double rank_key_bound(RankBy by, const CostModel& model, int64_t gpus, const ParallelConfig&,
                      double compute_s) {
  const double best_goodput = goodput_upper_bound(gpus, model.machine());
  switch (by) {
    case RankBy::iteration: return compute_s;
    case RankBy::goodput: return goodput_key(best_goodput);
    case RankBy::cost: return seconds_per_goodput(compute_s, best_goodput);
  }
  return compute_s;
}

}  // namespace axo
