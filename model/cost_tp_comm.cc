// One layer's tensor-parallel collectives and their overlap (see cost_tp_comm.h).
#include "model/cost_tp_comm.h"

#include <array>

#include "model/cost_context.h"
#include "model/cost_fp8.h"

namespace axo {

namespace {

constexpr CostScope kLayer = CostScope::layer;

// The collectives of one linear layer in one forward pass (forward or recompute).
template <class Visit>
void linear_forward_collectives(const CostInputs& in, const LocalLinear& l, CostPhase phase, Visit& visit) {
  const double e = activation_comm_bytes(in), tokens = in.shapes.tokens;
  const char* name = l.full.name;
  if (in.machine.weight_gather == WeightGather::per_linear) {
    visit(Collective{kLayer, phase, CollectiveOp::all_gather, GridDim::z, l.block, gathered_weight_bytes(in),
                     "weights", name, Exposure::prefetch_fwd});
  }
  if (in.config.sequence_parallel && !l.full.transposed) {
    visit(Collective{kLayer, phase, CollectiveOp::all_gather, GridDim::y, tokens * double(l.full.in),
                     sequence_parallel_gather_bytes(in), "sequence-parallel input", name});
  } else if (in.config.sequence_parallel) {
    visit(Collective{kLayer, phase, CollectiveOp::reduce_scatter, GridDim::y, tokens * double(l.full.out), e,
                     "partial sums", name});
  } else {
    visit(Collective{kLayer, phase, CollectiveOp::all_reduce, l.in_dim, tokens * double(l.full.out) / l.out_split,
                     e, "partial sums", name});
  }
}

// How a backward TP collective that could hide under a GEMM of its layer is
// exposed: under it (OAR), or on the critical path with stack.tp_collectives
// exposed (eager DTensor TP, machine_profile.h).
Exposure backward_tp_exposure(const CostInputs& in) {
  return in.machine.tp_collectives == TpCollectives::exposed ? Exposure::exposed : Exposure::oar;
}

// The collectives of linear layer `i` in backward.
template <class Visit>
void linear_backward_collectives(const CostInputs& in, const LayerCompute& layer, size_t i, Visit& visit) {
  const LocalLinear& l = in.shapes.linears[i];
  const double e = activation_comm_bytes(in), tokens = in.shapes.tokens;
  const double gathered = sequence_parallel_gather_bytes(in);  // fp8: 1 byte (cost_fp8.h)
  const char* name = l.full.name;
  constexpr CostPhase bwd = CostPhase::backward;
  const Exposure tp = backward_tp_exposure(in);
  const bool per_linear = in.machine.weight_gather == WeightGather::per_linear;
  if (per_linear) {
    visit(Collective{kLayer, bwd, CollectiveOp::all_gather, GridDim::z, l.block, gathered_weight_bytes(in),
                     "weights", name, Exposure::async_bwd});
  }
  if (in.config.sequence_parallel && !l.full.transposed) {
    // Megatron-LM keeps only the sequence-split input and gathers it again
    // for the weight gradient, under the dX GEMM. Eager DTensor TP (exposed)
    // does not: autograd saved the gathered input its forward redistributed
    // (torchtitan's ColwiseParallel, input_layouts Shard(1) → Replicate()).
    if (tp != Exposure::exposed) {
      visit(Collective{kLayer, bwd, CollectiveOp::all_gather, GridDim::y, tokens * double(l.full.in), gathered,
                       "input again for dW", name, tp, layer.linear_dx[i]});
    }
    visit(Collective{kLayer, bwd, CollectiveOp::reduce_scatter, GridDim::y, tokens * double(l.full.in), e, "dX",
                     name, tp, layer.linear_dw[i]});
  } else if (in.config.sequence_parallel) {
    visit(Collective{kLayer, bwd, CollectiveOp::all_gather, GridDim::y, tokens * double(l.full.out), gathered,
                     "output gradient", name});
  } else {
    visit(Collective{kLayer, bwd, CollectiveOp::all_reduce, l.out_dim, tokens * double(l.full.in) / l.in_split, e,
                     "dX", name, tp, layer.linear_dw[i]});
  }
  if (per_linear) {
    visit(Collective{kLayer, bwd, CollectiveOp::reduce_scatter, GridDim::z, l.block, reduced_gradient_bytes(in), "dW",
                     name, Exposure::async_bwd});
  }
}

// With stack.weight_gather per_block (FSDP), the Z collectives of the whole
// block at once: its weights gathered for the forward and once more for
// backward, which a recomputed forward shares (FSDP keeps the block unsharded
// from its backward pre-hook through its backward), its gradients
// reduce-scattered after backward; the same exposures as the per-linear ones,
// except that a backward gather issued after the gradients
// (stack.backward_prefetch post) has no compute to hide under.
template <class Visit>
void block_weight_collectives(const CostInputs& in, Visit& visit) {
  if (in.machine.weight_gather != WeightGather::per_block) return;
  const double block = in.shapes.block_weights(), e = gathered_weight_bytes(in);
  const char* all = "all linear layers";
  visit(Collective{kLayer, CostPhase::forward, CollectiveOp::all_gather, GridDim::z, block, e, "block weights", all,
                   Exposure::prefetch_fwd});
  const bool after_gradients = in.machine.backward_prefetch == BackwardPrefetch::post;
  visit(Collective{kLayer, CostPhase::backward, CollectiveOp::all_gather, GridDim::z, block, e, "block weights", all,
                   after_gradients ? Exposure::exposed : Exposure::async_bwd});
  visit(Collective{kLayer, CostPhase::backward, CollectiveOp::reduce_scatter, GridDim::z, block,
                   reduced_gradient_bytes(in), "block dW", all, Exposure::async_bwd});
}

// Every collective of one layer, in a fixed order (the explanation's).
template <class Visit>
void for_each_layer_collective(const CostInputs& in, const LayerCompute& layer, Visit&& visit) {
  const bool recompute = in.config.recompute == Recompute::full;
  block_weight_collectives(in, visit);
  for (size_t i = 0; i < in.shapes.linears.size(); ++i) {
    linear_forward_collectives(in, in.shapes.linears[i], CostPhase::forward, visit);
    if (recompute) linear_forward_collectives(in, in.shapes.linears[i], CostPhase::recompute, visit);
    linear_backward_collectives(in, layer, i, visit);
  }
  for (CostPhase phase : {CostPhase::forward, CostPhase::recompute, CostPhase::backward}) {
    if (phase == CostPhase::recompute && !recompute) continue;
    for (int norm = 0; norm < 2; ++norm) {
      visit(Collective{kLayer, phase, CollectiveOp::all_reduce, GridDim::x, 2 * in.shapes.tokens, 4,
                       "norm statistics"});
    }
  }
}

// One phase's collectives, summed by how they are exposed.
struct OverlapSums {
  double exposed = 0, prefetch = 0, async = 0, oar_exposed = 0, oar_total = 0;
  double pooled() const { return prefetch + async; }
};

void add(const CostInputs& in, OverlapSums& sums, const Collective& c, double t) {
  switch (c.exposure) {
    case Exposure::exposed: sums.exposed += t; break;
    case Exposure::prefetch_fwd: sums.prefetch += t; break;
    case Exposure::async_bwd: sums.async += t; break;
    case Exposure::oar:
      sums.oar_total += t;
      sums.oar_exposed += t - hidden_seconds(in.machine, t, c.window);
      break;
  }
}

double exposed_total(const CostInputs& in, const OverlapSums& s, double window) {
  if (!in.config.overlap) return s.exposed + s.prefetch + s.async + s.oar_total;
  return s.exposed + s.oar_exposed + s.pooled() - hidden_seconds(in.machine, s.pooled(), window);
}

// The exposed part of one collective of `t` seconds: its share of its pool's.
double exposed_share(const CostInputs& in, const OverlapSums& s, double window, const Collective& c, double t) {
  if (!in.config.overlap || c.exposure == Exposure::exposed) return t;
  if (c.exposure == Exposure::oar) return t * s.oar_exposed / s.oar_total;
  return t * (s.pooled() - hidden_seconds(in.machine, s.pooled(), window)) / s.pooled();
}

size_t phase_index(CostPhase phase) {
  return phase == CostPhase::forward ? 0 : phase == CostPhase::recompute ? 1 : 2;
}

}  // namespace

LayerComm layer_comm(const CostInputs& in, const LayerCompute& layer, const CostRecorder& record) {
  std::array<OverlapSums, 3> sums;  // forward, recompute, backward
  for_each_layer_collective(in, layer, [&](const Collective& c) {
    const double t = time_collective(in, c).seconds;
    if (t > 0) add(in, sums[phase_index(c.phase)], c, t);
  });
  // Prefetch hides under the forward GEMMs (forward and recompute), async traffic under the rest of backward.
  const std::array<double, 3> windows = {layer.forward_gemm, layer.forward_gemm, layer.backward_window};
  if (record.recording()) {
    for_each_layer_collective(in, layer, [&](const Collective& c) {
      const TimedCollective timed = time_collective(in, c);
      if (timed.seconds <= 0) return;
      const size_t pass = phase_index(c.phase);
      record_collective(in, record, c, timed, exposed_share(in, sums[pass], windows[pass], c, timed.seconds));
    });
  }
  const RingAttention ring = ring_attention(in, layer, record);
  return {exposed_total(in, sums[0], windows[0]) + ring.forward,
          exposed_total(in, sums[1], windows[1]) + ring.recompute,
          exposed_total(in, sums[2], windows[2]) + ring.backward};
}

}  // namespace axo
