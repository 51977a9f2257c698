// The fourth step of the cost model: the per-microbatch time of each pipeline
// stage, and the stage that sets the pace of the pipeline: the slowest.
//
// Stage s runs its own layers (stage_partition.h: a balanced split, possibly
// unequal), each at the layer's compute and exposed tensor-parallel
// communication, plus the embedding on the first stage and the final norm,
// LM head and loss on the last (all of it when there is one stage):
//   T_s = L_s · (layer compute + layer tp_comm) + [s = 0]·embedding + [s = p−1]·head
// Under partial recompute the R_s layers it recomputes (recomputed_layers)
// cost the layer and the other L_s − R_s the layer without recompute (`kept`).
#pragma once

#include "model/cost_layer.h"
#include "model/cost_stage_ends.h"
#include "model/cost_tp_comm.h"
#include <cstdint>
#include <vector>

namespace axo {

struct StageTime {
  int64_t stage = 0;
  double compute = 0;  // per microbatch, recompute included
  double tp_comm = 0;  // exposed, per microbatch
  double layers = 0;   // transformer layers the stage runs
  double recomputed = 0;  // of them, those that cost `layer` (all but partial recompute's kept layers)
  double total() const { return compute + tp_comm; }
};

// What every stage's time is made of.
struct StageParts {
  const LayerCompute& layer;
  const LayerComm& comm;
  const StageEndCompute& ends;
  const StageEndComm& ends_comm;
  // Partial recompute: a layer that keeps its activations, and each stage's recomputed layers.
  const LayerCompute* kept = nullptr;
  const LayerComm* kept_comm = nullptr;
  std::vector<int64_t> recomputed = {};  // empty: every layer costs `layer`
};

// Stage `stage` of stages running `stage_layers` layers each (layers_by_stage).
StageTime stage_time(const std::vector<int64_t>& stage_layers, int64_t stage, const StageParts& parts);
// The slowest stage; the first of them on a tie.
StageTime slowest_stage(const std::vector<int64_t>& stage_layers, const StageParts& parts);

}  // namespace axo
