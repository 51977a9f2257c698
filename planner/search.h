// The configuration search: every way to split a model over N GPUs that the
// model's shapes allow, costed, filtered by memory, ranked by iteration time.
//
// Branch and bound: a configuration whose compute time alone (a lower bound
// on its iteration time) is slower than the slowest of the top K kept so far
// cannot enter the top K, and is skipped with all its rank orders.
//
// The space is the field table's (model/config_fields.h), walked in its
// nesting order: every factorization N = pipeline × data × context × z × y × x
// whose sizes divide the model (layers, heads, hidden, ffn, batch; 2·context
// the sequence), then per valid
// grid every setting (microbatch, interleaving, sequence parallelism,
// recompute, offload, overlap), then every rank order that places the groups
// differently (orders that put every group on the same links are one
// configuration). --fix narrows each field's candidates through
// FixedFields::allows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/breakdown.h"
#include "model/cost_model.h"
#include "model/config_fields.h"
#include "model/parallel_config.h"

namespace axo {

struct PlanRow {
  ParallelConfig config;
  Breakdown breakdown;
};

struct SearchOptions {
  int64_t gpus = 0;
  size_t top = 10;
  FixedFields fixed;  // fields held fixed (--fix)
  bool prune = true;  // branch and bound; off costs every configuration (for tests)
};

struct SearchResult {
  std::vector<PlanRow> best;        // configurations that fit, fastest first, at most `top`
  std::optional<PlanRow> closest;   // when none fits: the one that misses memory by least
  int64_t evaluated = 0;            // configurations costed (memory, and time where it fits)
  int64_t pruned = 0;               // skipped: their compute alone is slower than the top's last
  int64_t grids = 0;                // valid factorizations of the GPU count
  double seconds = 0;               // wall time of the search
};

// Throws InputError when no configuration at all is valid, saying what does
// not divide what for the simplest splits.
SearchResult search(const CostModel& model, const SearchOptions& options);

}  // namespace axo
