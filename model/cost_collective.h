// Collectives as the cost model's steps see them: one collective of a
// group of the grid, timed by where the group sits (comm_model.h), and its
// explanation item.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

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
  GridDims also = 0;                // dimensions its group spans besides `dim` (collective_dims)
};

// Whether the stack keeps every parameter but the linears' whole over Z, as axo's executor
// does (ActivationLayout::axo, model/axo_parameters.h): no Z gathers of the embedding or the
// head, and their gradients, the norms' and the biases' summed over Z as well as data.
inline bool keeps_whole_over_z(const MachineProfile& machine) {
  return machine.activations == ActivationLayout::axo;
}

// The groups of several dimensions `machine`'s stack prices for `spec`: kPricedDimensionPairs;
// a stage's ranks (every dimension but the pipeline's) where prices_stage_group (cost_fp8.h);
// where keeps_whole_over_z, z × context × data, y × z × context × data and y × z
// (cost_data_parallel.cc).
std::vector<GridDims> priced_groups(const TransformerSpec& spec, const MachineProfile& machine);
// The group of the dimensions `dims` of `c`'s grid together (place_dimensions).
inline GroupPlacement grid_group(const ParallelConfig& c, GridDims dims, int64_t gpus_per_node) {
  std::array<GridSpan, kGridDims> spans{};
  size_t n = 0;
  for (int d = 0; d < kGridDims; ++d) {
    if (has_dim(dims, GridDim(d))) spans[n++] = {c.size(GridDim(d)), c.stride(GridDim(d))};
  }
  return place_dimensions(std::span<const GridSpan>(spans.data(), n), gpus_per_node, c.gpus());
}

// Every rank of one of `c`'s pipeline stages: the ranks inside the pipeline's stride and those
// outside the pipeline, a box of the two, one contiguous group where the pipeline is outermost.
inline GroupPlacement stage_group(const ParallelConfig& c, int64_t gpus_per_node) {
  return grid_group(c, kStageDims, gpus_per_node);
}

// The dimensions a collective over `dim` (and `also`) spans: those, and with data the
// context too: the data-parallel collectives (the gradient reduction, the sharded
// optimizer's) span data × context: context ranks hold the same weights and
// each computes gradients from its own part of every sequence (Megatron-LM
// megatron/core/distributed/distributed_data_parallel.py reduces dense
// gradients over the data-parallel group "with context parallel").
inline GridDims collective_dims(GridDim dim, GridDims also = 0) {
  const GridDims dims = also | grid_dims({dim});
  return has_dim(dims, GridDim::data) ? dims | grid_dims({GridDim::context}) : dims;
}
inline GroupPlacement collective_group(const ParallelConfig& c, GridDim dim, int64_t gpus_per_node,
                                       GridDims also = 0) {
  const GridDims dims = collective_dims(dim, also);
  if (dims == grid_dims({dim})) return place_group(c.size(dim), c.stride(dim), gpus_per_node, c.gpus());
  return grid_group(c, dims, gpus_per_node);
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
  timed.group = collective_group(in.config, c.dim, in.machine.gpus_per_node, c.also);
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
