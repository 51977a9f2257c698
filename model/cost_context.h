// Context parallelism's ring attention: the key/value blocks each layer
// passes around the context group, and what the attention compute hides.
//
// Each of the c context ranks holds s/c tokens of every sequence (two of 2·c
// chunks, so that with causal masking every rank does the same attention
// work: Megatron-LM megatron/core/utils.py get_batch_on_this_cp_rank). Per
// layer and microbatch (Megatron-LM docs/api-guide/context_parallel.md;
// Liu et al. 2023, ring attention):
//   forward   c − 1 hops; each passes the rank's current K and V block to its
//             ring neighbour: 2 · (b/z) · (s/c) · (kv_heads/y) · d · e bytes,
//             while the attention of the block it holds runs (1/c of the
//             attention core forward)
//   backward  c − 1 hops of K and V again and of their gradients: twice the
//             bytes, under 1/c of the attention core backward each
//   recompute the forward's hops again where the recompute runs the attention
//             core again (full, or selective of the attention core): it needs
//             every key block; torchtitan's per-op selective recompute keeps
//             the attention kernel's output and runs no ring again
// Exposed per pass: the first hop's latency (its set-up is on the critical
// path) plus, per hop, what the compute of the block in hand does not hide:
//   exposed = α + (c − 1) · (t_hop − overlap_efficiency · min(t_hop, t_block))
// with t_hop one send/recv between ring neighbours, across nodes where the
// ring spans them (neighbour_pair, comm_model.h: one flow, one GPU's NICs).
#pragma once

#include "model/cost_collective.h"
#include "model/cost_layer.h"

namespace axo {

// Exposed seconds of one layer's ring attention per microbatch.
struct RingAttention {
  double forward = 0, recompute = 0, backward = 0;
};

// Bytes of one hop of the forward: the rank's K and V blocks.
double ring_hop_bytes(const CostInputs& in);

// Whether the recompute pass runs the attention core again (and with it the ring).
bool recompute_runs_attention(const CostInputs& in);

// The attention compute one layer's ring passes hide under per microbatch: the forward's, the
// recompute's (where it runs the attention again) and the backward's; 0 without context
// parallelism. Other overlapped traffic does not count it as its window too, or a faster
// attention kernel would expose both by what it saves once.
struct RingWindows {
  double forward = 0, recompute = 0, backward = 0;
  double total() const { return forward + recompute + backward; }
};
RingWindows ring_windows(const CostInputs& in, const LayerCompute& layer);

// Zero when context = 1.
RingAttention ring_attention(const CostInputs& in, const LayerCompute& layer, const CostRecorder& record);

}  // namespace axo
