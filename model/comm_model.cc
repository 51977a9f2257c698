// Collective time from group placement (see comm_model.h).
#include "model/comm_model.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>

namespace axo {

// A group small enough for one node straddles a node boundary when its block
// of size·stride ranks does: the block [start, start + size·stride) that holds
// boundary B = start + d keeps q = ⌈(d − b)/stride⌉ of the instance at offset
// b < stride on the first node, size − q on the next. As b runs over
// [0, stride), q is ⌈d/stride⌉ or ⌊d/stride⌋. Blocks repeat their offsets to
// the boundaries every lcm(size·stride, gpus_per_node) ranks.
static int64_t straddling_ranks_per_node(int64_t size, int64_t stride, int64_t gpus_per_node,
                                         int64_t world) {
  const int64_t block = size * stride;
  const int64_t period = std::lcm(block, gpus_per_node);
  int64_t fewest = size;  // the instance split most evenly keeps the fewest on one node
  for (int64_t start = 0; start < std::min(world, period); start += block) {
    const int64_t d = (start / gpus_per_node + 1) * gpus_per_node - start;
    if (d >= block) continue;  // the block lies inside one node
    for (int64_t first : {d / stride, (d + stride - 1) / stride}) {
      if (first > 0 && first < size) fewest = std::min(fewest, std::max(first, size - first));
    }
  }
  return fewest;
}

GroupPlacement place_group(int64_t size, int64_t stride, int64_t gpus_per_node, int64_t world) {
  GroupPlacement group;
  group.size = size;
  const int64_t block = size * stride;  // 0 for a pair of one rank (the stages of a 1-stage pipeline)
  if (block <= gpus_per_node) {
    group.ranks_per_node = block == 0 || gpus_per_node % block == 0
                               ? size
                               : straddling_ranks_per_node(size, stride, gpus_per_node, world);
  } else if (stride >= gpus_per_node) {
    group.ranks_per_node = 1;
  } else {
    group.ranks_per_node = std::clamp<int64_t>(gpus_per_node / stride, 1, size);
  }
  return group;
}

GroupPlacement product_group(GroupPlacement a, GroupPlacement b) {
  return {a.size * b.size, a.ranks_per_node * b.ranks_per_node};
}

GroupPlacement neighbour_pair(GroupPlacement group) { return {2, group.intra_node() ? 2 : 1}; }

double bus_factor(CollectiveOp op, int64_t p) {
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * double(p - 1) / double(p);
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter: return double(p - 1) / double(p);
    case CollectiveOp::broadcast:
    case CollectiveOp::send_recv: return 1.0;
  }
  return 1.0;
}

// Latency steps of a ring: 2(p−1) for all-reduce, p−1 for the others, 1 for send/recv.
static double latency_steps(CollectiveOp op, int64_t p) {
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * double(p - 1);
    case CollectiveOp::send_recv: return 1.0;
    default: return double(p - 1);
  }
}

// A group over several nodes, as NCCL times it (NVIDIA/nccl src/graph/tuning.cc,
// ncclTopoTuneModel): NCCL orders the ring so that each node's ranks are
// consecutive, so of the ring's steps only those that cross a node pay the
// network's latency, the rest the intra-node link's: nInterSteps = nodes − 1
// for all-gather and reduce-scatter, 2(nodes − 1) for all-reduce. For an
// all-reduce NCCL may run its double binary tree instead, whose latency is
// 2·((ranks per node − 1)·α_intra + log2(nodes)·α_inter) at the ring's
// bandwidth ("Massively Scale Your Deep Learning Training with NCCL 2.4",
// NVIDIA 2019: full bandwidth, logarithmic latency); NCCL picks the faster.
static double spanning_latency_s(const MachineProfile& machine, CollectiveOp op, GroupPlacement group) {
  const double intra = machine.intra_alpha_us * 1e-6, inter = machine.inter_alpha_us * 1e-6;
  const int64_t nodes = (group.size + group.ranks_per_node - 1) / group.ranks_per_node;
  const double steps = latency_steps(op, group.size);
  const double inter_steps = op == CollectiveOp::all_reduce ? 2.0 * double(nodes - 1)
                             : op == CollectiveOp::send_recv ? 1.0
                                                             : double(nodes - 1);
  const double ring = (steps - inter_steps) * intra + inter_steps * inter;
  if (op != CollectiveOp::all_reduce) return ring;
  // ⌈log2(nodes)⌉ levels (nodes ≥ 2 here), by integer arithmetic: the search calls this per collective.
  const double levels = double(std::bit_width(uint64_t(nodes - 1)));
  const double tree = 2 * (double(group.ranks_per_node - 1) * intra + levels * inter);
  return std::min(ring, tree);
}

LinkEstimate link_estimate(const MachineProfile& machine, CollectiveOp op, GroupPlacement group,
                           double bytes) {
  for (const CollectiveFit& fit : machine.collectives) {
    if (fit.op != op || fit.group_size != group.size || fit.ranks_per_node != group.ranks_per_node) {
      continue;
    }
    for (const LinkSegment& s : fit.segments) {
      if (bytes <= s.max_bytes || &s == &fit.segments.back()) {
        return {s.alpha_us * 1e-6, s.bus_bandwidth_GBps * 1e9};
      }
    }
  }
  const double intra = machine.intra_bus_bandwidth_GBps * 1e9;
  if (group.intra_node()) {
    return {latency_steps(op, group.size) * machine.intra_alpha_us * 1e-6, intra};
  }
  const double nic_share = double(machine.nics_per_node) * machine.nic_bandwidth_GBps * 1e9 *
                           double(group.ranks_per_node) / double(machine.gpus_per_node);
  return {spanning_latency_s(machine, op, group), std::min(intra, nic_share)};
}

double collective_seconds(const MachineProfile& machine, CollectiveOp op, GroupPlacement group,
                          double bytes) {
  if (group.size <= 1 || bytes <= 0) return 0;
  const LinkEstimate link = link_estimate(machine, op, group, bytes);
  return machine.collective_slowdown * (link.alpha_s + bus_factor(op, group.size) * bytes / link.bus_bandwidth_Bps);
}

}  // namespace axo
