// The activation memory of axo's own executor (ActivationLayout::axo), as its
// GptStage carves it (executor/parallel/gpt_stage.cc: carve_layer, carve_head,
// carve_gradients, kept_size, rolling_size; llm.c's layout). With m = (b/z)·(s/c)
// rows of a microbatch on a rank, mr = m/y of them under sequence parallelism
// (else m), hidden h/x per row and column widths n/y:
//   a layer keeps ln1, attproj, residual2, ln2, fcproj and residual3 [mr, h/x],
//   both norms' mean and rstd [mr], q k v, the attention output, the MLP's up
//   output and its activation [m, n/y], the attention probabilities
//   [b/z, a/y, s/c, s] (ring attention: its log-sum-exp [b/z, a/y, s/c]; none
//   under selective recompute), and with sequence parallelism both norms'
//   gathered rows [m, h/x];
//   a chunk's stash holds its input [mr, h/x], each recomputed layer's output
//   [mr, h/x], each other layer whole, and on the model's last chunk the final
//   norm (its [mr, h/x], statistics and gathered rows) and the logits and
//   probabilities [m, V'/y], all in the training precision;
//   backward holds, in fp32, two residual-stream gradients [mr, h/x], one layer's
//   activation gradients (a layer but its probabilities), on the last stage the
//   head's (final norm, gathered rows, logits), and the probabilities' gradient
//   (none with ring attention); selective recompute one layer's probabilities,
//   rebuilt; and where it computes in rolling views (2-byte activations or full
//   recompute) one chunk input and one layer in fp32, with the head in 2-byte
//   training; the first stage under sequence parallelism one [m, h/x] of the
//   embedding's gathered rows (vocab_parallel_head.cc, its scratch).
// Not counted: ring attention's own buffers (context > 1: its key/value gradient,
// statistics and score blocks, executor/parallel/ring_attention.cc; 2% of gpt2-mini's
// activations at context 2). The executor has one attention (materialized, or the
// ring), Korthikanti's selective recompute, its own loss and no dropout, so the stack's
// attention, selective, loss and the model's dropout do not change this layout.
// Elements are counted here; bytes are the callers'.
#pragma once

#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

struct AxoActivationShapes {
  double stream = 0;        // one [mr, h/x] tensor: a chunk's input, a layer's output
  double gathered = 0;      // one [m, h/x] tensor: a stream tensor's rows gathered over Y
  double layer = 0;         // one layer's kept tensors, with its probabilities where it keeps them
  double layer_grads = 0;   // one layer's activation gradients (no probabilities)
  double probabilities = 0; // one layer's attention probabilities [b/z, a/y, s/c, s] (0 with the ring)
  double head = 0;          // the model's last chunk's head: final norm and logits with probabilities
  double head_grads = 0;    // the head's activation gradients: final norm, gathered rows, logits
};

AxoActivationShapes axo_activation_shapes(const TransformerSpec& spec, const ParallelConfig& config);

// Bytes in fp32 held besides the stashes (see above): on every stage, and more on the first and on the last.
struct AxoBackwardBytes {
  double every_stage = 0, first_stage = 0, last_stage = 0;
};
AxoBackwardBytes axo_backward_bytes(const TransformerSpec& spec, const ParallelConfig& config);

}  // namespace axo
