// What the first and the last pipeline stage run besides their layers: the
// embedding (first), and the final norm, LM head and loss (last), with their
// tensor-parallel collectives. The head and loss follow the vocabulary rule
// of vocab_parallel.h: each Y rank computes V'/y rows of the logits.
//
//   first  embedding lookup (read a row, write the activation) and its
//          scatter-add backward; all-reduce its output over Y (each Y rank
//          looks up its vocabulary slice), all-gather its weights over Z
//   last   final norm; LM head GEMMs [T × h/x]·[h/x × V'/y], the partial
//          logits all-reduced over X; fp32 cross-entropy (read the logits,
//          write the fp32 softmax, read it back), its max and sum all-reduced
//          over Y; backward all-reduces dX over Y and reduce-scatters dW over Z
// axo's executor keeps the embedding and head whole over Z (keeps_whole_over_z):
// no Z gathers or reduce-scatters here; cost_data_parallel sums their gradients.
#pragma once

#include "model/cost_collective.h"

namespace axo {

// Whether the embedding and the LM head are apart, each its own weights: untied, or tied but on
// different stages (pipeline > 1), where a tied pair on one stage is one unit, gathered and
// accumulated once.
inline bool embedding_apart_from_head(const TransformerSpec& spec, const ParallelConfig& c) {
  return !spec.tied_embeddings || c.pipeline > 1;
}

// Per-microbatch compute seconds of the stage ends.
struct StageEndCompute {
  double first_forward = 0, first_backward = 0;  // embedding
  double last_forward = 0, last_backward = 0;    // final norm, LM head, loss
  double first() const { return first_forward + first_backward; }
  double last() const { return last_forward + last_backward; }
};
StageEndCompute stage_end_compute(const CostInputs& in, const CostRecorder& record);

// Per-microbatch seconds of their collectives (none overlaps).
struct StageEndComm {
  double first = 0, last_forward = 0, last_backward = 0;
  double last() const { return last_forward + last_backward; }
};
StageEndComm stage_end_comm(const CostInputs& in, const CostRecorder& record);

}  // namespace axo
