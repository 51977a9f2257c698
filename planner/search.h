// The configuration search: every way to split a model over N GPUs that the
// model's shapes allow, costed, filtered by memory, ranked by iteration time.
//
// Branch and bound: a configuration whose compute time alone (a lower bound
// on its iteration time) is slower than the slowest of the top K kept so far
// cannot enter the top K, and is skipped with all its rank orders; each rank
// order left is skipped too when its compute and exposed tensor-parallel
// communication (CostModel::paced_lower_bound) already are. The setting
// bounds skip what those would, sooner: the compute bound is checked once
// for the settings nested inside the last one it reads (offload, zero and
// overlap do not change it), and each setting, before its memory is costed,
// by the paced bound of the rank order whose layers communicate least,
// found once per grid and setting of what a layer's time reads. Each bound
// skips only configurations that cannot enter the top, so the ranked rows
// are those of the search without them (tests/planner/search_test.cc).
//
// The space is the field table's (model/config_fields.h), walked in its
// nesting order: every factorization N = pipeline × data × context × z × y × x
// whose sizes divide the model (layers, heads, hidden, ffn, batch; 2·context,
// with context > 1, the sequence), then per valid grid every setting
// (microbatch, interleaving, sequence parallelism, recompute,
// recompute_layers held where the chunks hold that many layers, offload,
// overlap), then every rank order that places the groups
// differently (orders that put every group on the same links are one
// configuration). --fix narrows each field's candidates through
// FixedFields::allows, or for a field the search takes as given
// (FieldSearch::fixed_as_given: rank orders, recompute_layers) is its value.
//
// With rank_by goodput or cost, configurations rank by that key (ranking.h)
// and are bounded by its bound. Rows whose every number is equal take one
// place, naming the others (row_folding.h). Every kept row carries its
// goodput and, with a token budget, its time to train (model/goodput.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/breakdown.h"
#include "model/cost_model.h"
#include "model/config_fields.h"
#include "model/goodput.h"
#include "model/parallel_config.h"
#include "planner/ranking.h"

namespace axo {

// The measured iteration time's range for a prediction: {low, high} seconds.
struct IterationBand {
  double low_s = 0;
  double high_s = 0;
};

struct PlanRow {
  ParallelConfig config;
  Breakdown breakdown;
  // Configurations whose every number equals this one's, folded into it (planner/row_folding.h).
  std::vector<ParallelConfig> same_numbers;
  // Goodput, and with a token budget the time to train (model/goodput.h).
  TrainingEstimate training;
  // Where the measured iteration time falls, from the GPU type's error band
  // (planner/prediction_band.h); set by the caller, absent without a band.
  std::optional<IterationBand> band;
};

// One costed configuration, for a picture of the space (planner/space_plot.h).
struct SpacePoint {
  double iter_time = 0;     // s
  double memory_bytes = 0;  // per GPU
};

struct SearchOptions {
  int64_t gpus = 0;
  size_t top = 10;
  FixedFields fixed;  // fields held fixed (--fix)
  bool prune = true;  // branch and bound; off costs every configuration (for tests)
  // With prune: also bound each rank order by its compute and tensor-parallel
  // communication (CostModel::paced_lower_bound) before costing it. Off: the
  // search as it was before that bound, for bench/plan_bench's comparison.
  bool paced_bound = true;
  // With prune: check the compute bound once for the settings that do not
  // change it, and (with paced_bound) bound each setting, before its memory,
  // by the paced bound of its fastest placement. Off: the search as it was
  // before these, for bench/plan_bench's comparison.
  bool setting_bounds = true;
  RankBy rank_by = RankBy::iteration;
  TokenBudget budget;           // for the rows' time to train
  bool fold = true;             // rows with equal numbers take one place (row_folding.h)
  bool record_points = false;   // keep every costed configuration's SpacePoint (and count out grids that cannot fit)
  // Where set, only the configurations it accepts are ranked (an export's nearest plan: those its
  // framework can run); the others are costed (and recorded) but kept out of `best`, which may be
  // empty where configurations fit (`closest` is then whatever missed memory by least, accepted or not).
  std::function<bool(const ParallelConfig&)> accept;
};

struct SearchResult {
  std::vector<PlanRow> best;        // configurations that fit, fastest first, at most `top`
  std::optional<PlanRow> closest;   // when none fits: the one that misses memory by least
  int64_t evaluated = 0;            // configurations costed (memory, and time where it fits)
  int64_t pruned = 0;               // skipped: their compute alone is slower than the top's last
  int64_t grids = 0;                // valid factorizations of the GPU count
  double seconds = 0;               // wall time of the search
  std::vector<SpacePoint> points;   // with record_points: every configuration whose time was costed
};

// Throws InputError when no configuration at all is valid, saying what does
// not divide what for the simplest splits.
SearchResult search(const CostModel& model, const SearchOptions& options);

}  // namespace axo
