// Time of a collective over a group of ranks, from where the group sits.
//
// Ring collectives over p ranks moving S bytes (REFERENCE-DATA.md; nccl-tests
// doc/PERFORMANCE.md): time = α + f · S / B with the bus-bandwidth factor
// f = 2(p−1)/p for all-reduce, (p−1)/p for all-gather and reduce-scatter,
// 1 for broadcast and send/recv, and B the group's bus bandwidth. S is the
// full buffer: the all-reduced buffer, the gathered output, the scattered input.
//
// B and α follow from the group's placement: a group whose ranks all share a
// node uses the intra-node link; otherwise all groups of that shape run at
// once and share each node's NICs, so a group with k members per node gets
// min(intra, nics · nic_bandwidth · k / gpus_per_node). Latency: α_intra per
// ring step inside a node; a group across nodes pays α_inter only on the steps
// that cross a node and α_intra on the rest, and an all-reduce takes NCCL's
// tree when its log2(nodes) latency is lower (NCCL src/graph/tuning.cc; see
// comm_model.cc). That is the simple protocol, priced on the profile's
// alpha_us. Where the profile has a low_latency section (NCCL's LL protocol),
// a collective also prices as LL's base latency plus the same steps at LL's
// own latencies, at a quarter of the bandwidth (a third for a node's other
// collectives) under LL's cap for the nodes the group spans (one, two or
// more), and takes whichever is faster for its bytes,
// as NCCL's tuner picks a protocol (NVIDIA/nccl src/graph/tuning.cc
// @b6475625: baseLat, hwLat, llMaxBws); a send/recv takes LL up to 16 KiB
// (kP2pLowLatencyBytes). A measured fit for the same op, group size and ranks
// per node replaces the model. Every time is multiplied by the profile's
// collective_slowdown.
#pragma once

#include <cstdint>
#include <span>

#include "model/machine_profile.h"

namespace axo {

struct GroupPlacement {
  int64_t size = 1;            // ranks in the group
  int64_t ranks_per_node = 1;  // of those, how many share one node
  bool intra_node() const { return ranks_per_node >= size; }
  int64_t nodes() const { return (size + ranks_per_node - 1) / ranks_per_node; }  // the nodes it spans
};

// The placement of a group of `size` ranks spaced `stride` apart in the rank
// order of `world` ranks, rank r on node r / gpus_per_node (ranks fill each
// node in turn: the Slurm export's --distribution=block). Its ranks per node
// are the fewest that any instance of it has on a node it occupies: that
// node's NICs carry the instance's ring across (the slowest instance sets the
// step). A group whose size·stride does not divide gpus_per_node straddles a
// node boundary once the job spans nodes (3 ranks on 8-GPU nodes: 6, 7 | 8,
// 1 rank on the second node); one larger than a node may leave a few ranks on
// its last (8 ranks on Summit's 6-GPU nodes: 0-5 | 6, 7).
GroupPlacement place_group(int64_t size, int64_t stride, int64_t gpus_per_node, int64_t world);
// The group of every member of `a` combined with every member of `b` (two
// dimensions of the grid, e.g. data × context): sizes and members per node
// multiply, as a node holds a box of the grid.
GroupPlacement product_group(GroupPlacement a, GroupPlacement b);
// One dimension of the grid in the rank order: its size and stride.
struct GridSpan {
  int64_t size = 1, stride = 1;
};
// The group of several dimensions of the grid together: where one lies just
// inside the next in the rank order (its stride × size is the next's stride)
// they are one group of both sizes at the inner stride (context 3 inside data 8
// on 24 GPUs: all 24, 8 to a node, where the product of the parts' placements
// said 2); the runs that do not, a box of them (product_group).
GroupPlacement place_dimensions(std::span<const GridSpan> spans, int64_t gpus_per_node, int64_t world);

// The link of one send/recv between neighbours of `group` (a pipeline's stages, ring
// attention's hops): two ranks on one node, or across nodes one rank on each, so that
// one GPU's share of the node's NICs carries it (a single flow, unlike a ring
// collective's channels over every NIC its ranks on the node reach).
GroupPlacement neighbour_pair(GroupPlacement group);

// The largest send/recv that takes the low-latency protocol: NCCL picks a
// point-to-point's protocol by size, not by its tuner (NCCL_P2P_LL_THRESHOLD's
// default, 16384 bytes: NCCL's environment-variable documentation).
inline constexpr double kP2pLowLatencyBytes = 16384;

// Bus-bandwidth factor f of the formula above.
double bus_factor(CollectiveOp op, int64_t group_size);

struct LinkEstimate {
  double alpha_s = 0;               // latency of the whole collective
  double bus_bandwidth_Bps = 0;     // bytes per second
};
LinkEstimate link_estimate(const MachineProfile& machine, CollectiveOp op, GroupPlacement group,
                           double bytes);

double collective_seconds(const MachineProfile& machine, CollectiveOp op, GroupPlacement group,
                          double bytes);

}  // namespace axo
