// Where a rank's time in a training step goes, in the planner's components
// (model/breakdown.h): compute, time blocked in tensor-parallel collectives,
// idle waiting for the pipeline (the bubble), pipeline sends, exposed
// data-parallel reductions, and the optimizer.
#pragma once

#include <array>

#include "executor/gpt/gpt.h"

namespace axo {

struct PhaseTimes {
  OpTimes ops;           // kernels by kind; their total is the compute component
  double tp_comm = 0;    // blocked in X, Y or Z collectives
  double bubble = 0;     // waiting for a pipeline neighbour's activation or gradient
  double pp_comm = 0;    // posting and retiring pipeline sends
  double dp_comm = 0;    // blocked in gradient reductions over data (and z, embedding)
  double optimizer = 0;  // loss and norm reductions, clipping, AdamW

  // In kComponentNames' order (offload is not measured here: 0).
  std::array<double, 7> components() const { return {ops.total(), tp_comm, bubble, pp_comm, dp_comm, 0.0, optimizer}; }
};

}  // namespace axo
