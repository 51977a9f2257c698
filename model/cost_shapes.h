// The first step of the cost model: the local shapes one rank works on for
// one microbatch, from the model and the configuration.
//
// With T = b·s/(z·c) local tokens (b sequences per microbatch, split over Z;
// each sequence split over the C context ranks, two of 2·c chunks each), a
// linear layer W: [out, in] runs the GEMM [T × in/x]·[in/x × out/y] when plain
// and [T × in/y]·[in/y × out/x] when transposed (AxoNN's 4D layer,
// ARCHITECTURE.md); attention runs (b/z)·(a/y) heads, s/c queries each
// against all s keys (ring attention, cost_context.h); the LM head is a plain
// layer over the Y rank's vocabulary slice (vocab_parallel.h).
#pragma once

#include <array>
#include <cstdint>

#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

// A linear layer Y = X·Wᵀ, W: [out, in]. A plain layer splits `in` over X and
// `out` over Y; a transposed one swaps the two.
struct Linear {
  const char* name;
  int64_t in, out;
  bool transposed;
};
// QKV, attention out, MLP up, MLP down: a block's four linear layers.
std::array<Linear, 4> block_linears(const TransformerSpec& spec);

// One linear layer on one rank.
struct LocalLinear {
  Linear full;
  GridDim in_dim, out_dim;  // the dimensions `in` and `out` are split over
  double m = 0, n = 0, k = 0;     // the forward GEMM [m×k]·[k×n]
  double in_split = 1, out_split = 1;
  double block = 0;  // weight elements per (x, y) rank before Z sharding: in·out/(in_split·out_split)
};

struct LocalShapes {
  double element_bytes = 0;  // e: bytes per element of the model's precision
  double tokens = 0;         // T = b·s/(z·c)
  double hidden_local = 0;   // h/x
  double hidden_elems = 0;   // T·h/x, divided by y under sequence parallelism
  double attention_batch = 0;  // (b/z)·(a/y) heads
  double seq = 0, head_dim = 0;  // keys per sequence (s), head width
  double query_seq = 0;          // queries per sequence on this rank: s/c
  std::array<LocalLinear, 4> linears{};
  double vocab_local = 0;  // V'/y rows of the LM head
  // A block's linear weight elements per (x, y) rank before Z sharding: Σ linears' block.
  double block_weights() const {
    double sum = 0;
    for (const LocalLinear& l : linears) sum += l.block;
    return sum;
  }
  // The LM head's (or token embedding's) weight elements per (x, y) rank before Z sharding.
  double head_weights() const { return hidden_local * vocab_local; }
};

LocalShapes local_shapes(const TransformerSpec& spec, const ParallelConfig& config);

// Tokens of one microbatch on one rank: b·s/(z·c) (the memory model's T too).
double tokens_per_rank(const TransformerSpec& spec, const ParallelConfig& config);

// What every step reads: the model, the machine, the configuration and its shapes.
struct CostInputs {
  const TransformerSpec& spec;
  const MachineProfile& machine;
  const ParallelConfig& config;
  const LocalShapes& shapes;
};

// Bytes per element of the activations' collectives and the pipeline's messages
// (stack.activation_comm_dtype).
inline double activation_comm_bytes(const CostInputs& in) {
  return activation_comm_bytes(in.machine.activation_comm_dtype, in.shapes.element_bytes);
}

// Bytes per element of the gradients the stack reduces, over Z or data (stack.reduce_dtype).
inline double reduced_gradient_bytes(const CostInputs& in) {
  return reduce_dtype_bytes(in.machine.reduce_dtype, in.shapes.element_bytes);
}

// Seconds of a memory-bound op moving `bytes` in `kernels` launches:
// bytes / (HBM bandwidth · memory_bound_efficiency) + kernels · launch.
double memory_op_seconds(const MachineProfile& machine, double bytes, double kernels);

}  // namespace axo
