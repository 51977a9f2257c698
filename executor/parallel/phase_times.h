// Where a rank's time in a training step goes, in the planner's components
// (model/breakdown.h): compute, time blocked in tensor-parallel collectives,
// idle waiting for the pipeline (the bubble), pipeline sends, exposed
// data-parallel reductions, offload's host-link copies, and the optimizer.
#pragma once

#include <array>

#include "executor/gpt/gpt.h"

namespace axo {

struct PhaseTimes {
  OpTimes ops;           // kernels by kind; their total is the compute component
  struct {
    double all_gather = 0, all_reduce = 0, reduce_scatter = 0;
    double ring = 0;     // ring attention's key/value blocks and their gradients (context group)
  } tp;                  // blocked in X, Y or Z collectives, by kind, or in the context ring
  double bubble = 0;     // waiting for a pipeline neighbour (its activation, gradient, or to take our last send)
  double pp_comm = 0;    // posting pipeline sends and receives, retiring finished sends
  double dp_comm = 0;    // blocked in gradient reductions over data (and z, embedding)
  double offload = 0;    // copying gradients to the host and weights back (CPU offload)
  double optimizer = 0;  // loss and norm reductions, clipping, AdamW

  // The model charges the ring's exposed time with tensor-parallel communication (model/cost_tp_comm.cc).
  double tp_comm() const { return tp.all_gather + tp.all_reduce + tp.reduce_scatter + tp.ring; }
  // In kComponentNames' order.
  std::array<double, 7> components() const {
    return {ops.total(), tp_comm(), bubble, pp_comm, dp_comm, offload, optimizer};
  }
};

}  // namespace axo
