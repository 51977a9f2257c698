// Collectives as the cost model's steps see them: one collective of a
// group of the grid, timed by where the group sits (comm_model.h), and its
// explanation item.
#pragma once

#include <algorithm>
#include <array>
#include <utility>

#include "model/comm_model.h"
#include "model/cost_item.h"
#include "model/cost_shapes.h"

namespace axo {

// How a collective's time is exposed when overlap is on.
enum class Exposure {
  exposed,       // on the critical path
  prefetch_fwd,  // weight all-gather prefetched under the forward GEMMs (OAG)
  oar,           // dX all-reduce (or re-gather) under one GEMM of the same layer (OAR)
  async_bwd,     // dW reduce-scatter and backward prefetch under the backward (ORS, OAG)
};

// One collective over the group of `dim` moving `elements` of `element_bytes`.
struct Collective {
  CostScope scope;
  CostPhase phase;
  CollectiveOp op;
  GridDim dim;
  double elements;
  double element_bytes;
  const char* what;                 // "weights", "partial sums", ...
  const char* layer = nullptr;      // the linear layer, if any: "qkv", ...
  Exposure exposure = Exposure::exposed;
  double window = 0;                // the compute an OAR collective hides under
};

// The two-dimension groups the model prices: the gradients' data × context
// (collective_group) and fp8's amax over x × y (cost_fp8.cc). The search's rank
// orders (config_fields.cc) and the exports' order check tell orders apart by them,
// and where it is priced by the stage's group (stage_group: fp8's amax under
// Transformer Engine, prices_stage_group).
inline constexpr std::array<std::pair<GridDim, GridDim>, 2> kPricedDimensionPairs{
    {{GridDim::data, GridDim::context}, {GridDim::x, GridDim::y}}};

// The group of dimensions `a` and `b` of `c`'s grid together (place_two_dimensions).
inline GroupPlacement grid_pair_group(const ParallelConfig& c, GridDim a, GridDim b, int64_t gpus_per_node) {
  return place_two_dimensions(c.size(a), c.stride(a), c.size(b), c.stride(b), gpus_per_node, c.gpus());
}

// Every rank of one of `c`'s pipeline stages (place_stage_group).
inline GroupPlacement stage_group(const ParallelConfig& c, int64_t gpus_per_node) {
  return place_stage_group(c.pipeline, c.stride(GridDim::pipeline), gpus_per_node, c.gpus());
}

// The ranks a collective over `dim` spans: its group of the grid, except that
// the data-parallel collectives (the gradient reduction, the sharded
// optimizer's) span data × context: context ranks hold the same weights and
// each computes gradients from its own part of every sequence (Megatron-LM
// megatron/core/distributed/distributed_data_parallel.py reduces dense
// gradients over the data-parallel group "with context parallel").
inline GroupPlacement collective_group(const ParallelConfig& c, GridDim dim, int64_t gpus_per_node) {
  if (dim != GridDim::data || c.context == 1) return place_group(c.size(dim), c.stride(dim), gpus_per_node, c.gpus());
  return grid_pair_group(c, GridDim::data, GridDim::context, gpus_per_node);
}

struct TimedCollective {
  GroupPlacement group;
  double bytes = 0;
  double seconds = 0;  // 0 for a group of one rank
  double parts = 1;    // collectives it runs as (a bucketed reduction's buckets)
};
// Run as `parts` collectives of equal parts (a bucketed reduction), each pays the latency.
inline TimedCollective time_collective(const CostInputs& in, const Collective& c, double parts = 1) {
  TimedCollective timed;
  timed.group = collective_group(in.config, c.dim, in.machine.gpus_per_node);
  timed.bytes = c.elements * c.element_bytes;
  timed.parts = parts;
  timed.seconds = parts * collective_seconds(in.machine, c.op, timed.group, timed.bytes / parts);
  return timed;
}

// Records the collective with `exposed` of its seconds on the critical path, `count`
// times per iteration (per microbatch for a layer's).
void record_collective(const CostInputs& in, const CostRecorder& record, const Collective& collective,
                       const TimedCollective& timed, double exposed, double count = 1);

// Of `t` seconds of communication overlapped with a `window` of compute, the
// part that hides: all of it that fits, scaled by the machine's overlap
// efficiency, less the interference: while the two run together (min(t, window))
// the compute runs at 1 − σ of its speed (σ = overlap_interference), which
// stretches it by σ·min(t, window). Compute and communication do not run
// apart for free: overlapping them slowed compute by 18.9% on average (up to
// 40%) on A100, H100, MI250 and MI210 ("Characterizing Compute-
// Communication Overlap in GPU-Accelerated Distributed Deep Learning",
// arXiv 2507.03114), the SMs NCCL's kernels hold (one CTA per channel) and
// the HBM bandwidth its copies take.
inline double hidden_seconds(const MachineProfile& machine, double t, double window) {
  window = std::max(window, 0.0);  // no compute hides nothing
  const double together = std::min(t, window);
  return machine.overlap_efficiency * std::min(window, t - machine.overlap_interference * together);
}

}  // namespace axo
