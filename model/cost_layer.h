// The second step of the cost model: the compute of one transformer layer on
// one rank for one microbatch, at its local shapes (cost_shapes.h).
//
// The four linear layers run forward, dX and dW GEMMs; the attention core,
// as the machine profile's stack runs it: materialized, the scores
// [s/c×d]·[d×s] and context [s/c×s]·[s×d] GEMMs batched over the local heads
// (s/c queries on each of c context ranks), backward two GEMMs of each shape,
// and a softmax through memory; flash, one fused kernel each way
// (cost_attention.h) with no softmax traffic; the memory-bound ops (norms,
// residual adds, softmax, the MLP activation, rotary embedding) are timed by
// the bytes they move, their backward at 1.5× (three tensors where the
// forward moved two). Recompute adds the whole forward again (full) or the
// attention core's (selective, Korthikanti et al. 2022).
#pragma once

#include <array>

#include "model/cost_item.h"
#include "model/cost_shapes.h"

namespace axo {

struct LayerCompute {
  double forward = 0;     // GEMMs and memory-bound ops
  double backward = 0;
  double recompute = 0;   // extra forward work in backward (selective or full)
  double forward_gemm = 0;            // window for the prefetched weight all-gather (OAG)
  std::array<double, 4> linear_dw{};  // windows for the dX all-reduces (OAR)
  std::array<double, 4> linear_dx{};  // windows for sequence parallelism's input re-gather
  double backward_window = 0;         // window for the async weight traffic of backward (ORS): not the ring's
  double attention_forward = 0;       // the attention core forward: the ring's window (cost_context.h)
  double attention_backward = 0;      // and its backward GEMMs
  double total() const { return forward + backward + recompute; }
};

LayerCompute layer_compute(const CostInputs& in, const CostRecorder& record);

}  // namespace axo
