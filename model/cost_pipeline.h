// The fifth step of the cost model: the pipeline schedule (1F1B, interleaved
// with v chunks per stage; Narayanan et al. SC'21 §2.2).
//
//   bubble  = (p − 1)/v · the slowest stage's time per microbatch
//   pp_comm = 2 · (v·m + p − 1) · t_p2p
// one activation forward and one gradient backward per microbatch and chunk
// boundary, plus the fill and drain. The activation [T, h/x] is replicated
// over Y, so each Y rank sends 1/y of it and the receiver all-gathers it over
// Y (Megatron-LM's scatter-gather); with sequence parallelism it is already
// split over Y.
#pragma once

#include "model/cost_stage.h"

namespace axo {

double pipeline_bubble(const ParallelConfig& config, const StageTime& slowest);
double pipeline_p2p(const CostInputs& in, double microbatches, const CostRecorder& record);

}  // namespace axo
