// The parameters a rank of axo's own executor holds (ActivationLayout::axo), counted by the
// executor's layout rule (executor/parallel/shard_layout.h), for the memory model: the linear
// weights are sharded over x·y·z, everything else is whole over Z. With h hidden channels over x
// and each linear's block n_ × k_ over (x, y) (qkv, fc: n/y × h/x; attproj: h/x × h/y;
// fcproj: h/x × ffn/y):
//   linear: each block's Z chunk, ⌈n_·k_ / z⌉ (the last chunk padded); summed over data;
//   rows:   the norms (h/x each) and the learned positions [rows, h/x], applied to the residual
//           stream's rows; summed over z and data (and y under sequence parallelism);
//   other:  the qkv and fc biases over y (n/y), attproj's and fcproj's over x (h/x); the token
//           embedding and a head [V'/y, h/x] (V' padded: model/vocab_parallel.h); summed over z
//           and data.
// The first stage holds the embedding, the last the final norm and, on a pipeline, the head's
// copy of the tied embedding (the untied head alike).
#pragma once

#include <array>

#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

// A linear layer's block on one rank, n_ × k_ (above).
struct AxoLinearBlock {
  double n = 0, k = 0;
};
// qkv, attproj, fc, fcproj (executor/parallel/linear_4d.h).
std::array<AxoLinearBlock, 4> axo_linear_blocks(const TransformerSpec& spec, const ParallelConfig& config);

// Elements held, by the group their gradients are summed over (above).
struct AxoParams {
  double linear = 0, rows = 0, other = 0;
  double total() const { return linear + rows + other; }
  // Those whose gradients are summed over ranks of Z or Y as well as data: all but the linears'
  // over z > 1, the rows' under sequence parallelism over y > 1, else none.
  double summed_beyond_data(const ParallelConfig& config) const;
  AxoParams& operator+=(const AxoParams& o);
};
AxoParams operator*(double count, const AxoParams& p);

// The token embedding's (or a head's) rows on a rank: V'/y × h/x.
double axo_vocabulary_params(const TransformerSpec& spec, const ParallelConfig& config);

// One layer's parameters on a rank.
AxoParams axo_layer_params(const TransformerSpec& spec, const ParallelConfig& config);
// What a stage holds besides its layers: the embedding on the first, the final norm and the head
// (where it has its own: on a pipeline, or untied) on the last.
AxoParams axo_end_params(const TransformerSpec& spec, const ParallelConfig& config, int64_t stage);
// Stage `stage` of `layers` layers: its layers' and its ends'.
AxoParams axo_stage_params(const TransformerSpec& spec, const ParallelConfig& config, int64_t layers, int64_t stage);

// In 2-byte training a stage hands its norms' weights and biases to the fp32 ops widened, in four
// reused fp32 windows of h/x, and takes their gradients in two (executor/parallel/stage_parameters.h):
// bytes booked as weights and as gradients.
struct AxoNormWindows {
  double weights = 0, gradients = 0;
};
AxoNormWindows axo_norm_window_bytes(const TransformerSpec& spec, const ParallelConfig& config);

}  // namespace axo
