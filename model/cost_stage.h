// The fourth step of the cost model: the per-microbatch time of a pipeline
// stage, its layers' compute and exposed tensor-parallel communication plus
// the embedding (first stage) and the LM head and loss (last stage), and the
// stage that sets the pace of the pipeline: the slowest.
#pragma once

#include "model/cost_layer.h"
#include "model/cost_stage_ends.h"
#include "model/cost_tp_comm.h"

namespace axo {

struct StageTime {
  double compute = 0;  // per microbatch, recompute included
  double tp_comm = 0;  // exposed, per microbatch
  double layers = 0;   // transformer layers the stage runs
  double total() const { return compute + tp_comm; }
};

// The slowest stage. With one stage it runs everything.
StageTime slowest_stage(const ParallelConfig& config, double layers_per_stage, const LayerCompute& layer,
                        const LayerComm& comm, const StageEndCompute& ends, const StageEndComm& ends_comm);

}  // namespace axo
