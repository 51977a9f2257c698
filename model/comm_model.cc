// Collective time from group placement (see comm_model.h).
#include "model/comm_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace axo {

// The fewest of the ranks first + k·stride (k < size) on any node they occupy, for stride < gpus_per_node.
// A node's count follows from its first rank mod stride, which repeats every stride / gcd(stride,
// gpus_per_node) nodes: the first node, that many interior ones and the last cover every count.
static int64_t fewest_on_a_node(int64_t first, int64_t size, int64_t stride, int64_t gpus_per_node) {
  const int64_t last = first + (size - 1) * stride;
  const int64_t first_node = first / gpus_per_node, last_node = last / gpus_per_node;
  const auto ranks_on = [&](int64_t node) {  // k with first + k·stride in the node
    const int64_t low = std::max(first, node * gpus_per_node), high = std::min(last, (node + 1) * gpus_per_node - 1);
    return (high - first) / stride - (low - first + stride - 1) / stride + 1;
  };
  const int64_t repeat = stride / std::gcd(stride, gpus_per_node);
  int64_t fewest = ranks_on(last_node);
  for (int64_t node = first_node; node < last_node && node <= first_node + repeat; ++node) {
    fewest = std::min(fewest, ranks_on(node));
  }
  return fewest;
}

// Instances of a group start at multiples of its block (size·stride ranks) plus an offset below
// the stride; their places against the node boundaries repeat every lcm(block, gpus_per_node)
// ranks. Past kMostInstances a period (a hand-written profile of thousands of GPUs per node), the
// even spread gpus_per_node / stride stands in.
static int64_t fewest_ranks_per_node(int64_t size, int64_t stride, int64_t gpus_per_node, int64_t world) {
  constexpr int64_t kMostInstances = 1 << 14;
  const int64_t block = size * stride;
  const int64_t span = std::min(world, std::lcm(block, gpus_per_node));
  if (span / block * stride > kMostInstances) return std::clamp<int64_t>(gpus_per_node / stride, 1, size);
  int64_t fewest = size;
  for (int64_t start = 0; start < span; start += block) {
    for (int64_t offset = 0; offset < stride; ++offset) {
      fewest = std::min(fewest, fewest_on_a_node(start + offset, size, stride, gpus_per_node));
    }
  }
  return fewest;
}

GroupPlacement place_group(int64_t size, int64_t stride, int64_t gpus_per_node, int64_t world) {
  GroupPlacement group;
  group.size = size;
  const int64_t block = size * stride;  // 0 for a pair of one rank (the stages of a 1-stage pipeline)
  if (block == 0 || size == 1 || gpus_per_node % block == 0) {
    group.ranks_per_node = size;  // whole instances in every node
  } else if (stride >= gpus_per_node) {
    group.ranks_per_node = 1;  // a node apart or more
  } else if (block % gpus_per_node == 0 && gpus_per_node % stride == 0) {
    group.ranks_per_node = gpus_per_node / stride;  // whole nodes in every instance
  } else {
    group.ranks_per_node = fewest_ranks_per_node(size, stride, gpus_per_node, world);
  }
  return group;
}

GroupPlacement product_group(GroupPlacement a, GroupPlacement b) {
  return {a.size * b.size, a.ranks_per_node * b.ranks_per_node};
}

GroupPlacement place_dimensions(std::span<const GridSpan> spans, int64_t gpus_per_node, int64_t world) {
  std::array<GridSpan, 8> sorted{};  // the grid's six dimensions at most
  size_t n = 0;
  if (spans.size() > sorted.size()) throw std::logic_error("place_dimensions: more dimensions than a grid has");
  for (GridSpan s : spans) {  // kept in order of stride as they come in
    if (s.size == 1) continue;
    size_t at = n++;
    for (; at > 0 && sorted[at - 1].stride > s.stride; --at) sorted[at] = sorted[at - 1];
    sorted[at] = s;
  }
  GroupPlacement group;
  for (size_t i = 0; i < n;) {
    GridSpan run = sorted[i++];
    while (i < n && run.stride * run.size == sorted[i].stride) run.size *= sorted[i++].size;
    group = product_group(group, place_group(run.size, run.stride, gpus_per_node, world));
  }
  return group;
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

namespace {

// The latencies of one protocol of the collective library: the profile's alpha_us for the simple
// protocol (no base; a tree level costs a ring step across nodes), its low_latency section for LL.
struct StepLatency {
  double base_s = 0;
  double intra_s = 0, inter_s = 0;  // a ring step on the node's link, across nodes
  double tree_inter_s = 0;          // a tree level across nodes
  double net_overhead_s = 0;        // the least a ring step costs once the ring spans nodes
};

StepLatency simple_protocol(const MachineProfile& m) {
  return {0, m.intra_alpha_us * 1e-6, m.inter_alpha_us * 1e-6, m.inter_alpha_us * 1e-6, 0};
}

StepLatency low_latency_protocol(const LowLatencyProtocol& ll) {
  return {ll.base_us * 1e-6, ll.intra_step_us * 1e-6, ll.inter_step_us * 1e-6, ll.tree_inter_step_us * 1e-6,
          ll.net_overhead_us * 1e-6};
}

}  // namespace

// A group over several nodes, as NCCL times it (NVIDIA/nccl src/graph/tuning.cc,
// ncclTopoTuneModel): NCCL orders the ring so that each node's ranks are
// consecutive, so of the ring's steps only those that cross a node pay the
// network's latency, the rest the intra-node link's, at least the network's
// post overhead each (@b6475625: intraLat = max(intraLat, netOverhead)):
// nInterSteps = nodes − 1 for all-gather and reduce-scatter, 2(nodes − 1) for
// all-reduce (@01afd20a; @b6475625 counts 2·nodes). For an all-reduce NCCL
// may run its double binary tree instead, whose latency is
// 2·((ranks per node − 1)·α_intra + log2(nodes)·α_tree) at the ring's
// bandwidth ("Massively Scale Your Deep Learning Training with NCCL 2.4",
// NVIDIA 2019: full bandwidth, logarithmic latency); NCCL picks the faster.
static double spanning_latency_s(StepLatency step, CollectiveOp op, GroupPlacement group) {
  const int64_t nodes = group.nodes();
  const double steps = latency_steps(op, group.size);
  const double inter_steps = op == CollectiveOp::all_reduce ? 2.0 * double(nodes - 1)
                             : op == CollectiveOp::send_recv ? 1.0
                                                             : double(nodes - 1);
  const double ring_intra = std::max(step.intra_s, step.net_overhead_s);
  const double ring = (steps - inter_steps) * ring_intra + inter_steps * step.inter_s;
  if (op != CollectiveOp::all_reduce) return step.base_s + ring;
  // ⌈log2(nodes)⌉ levels (nodes ≥ 2 here), by integer arithmetic: the search calls this per collective.
  const double levels = double(std::bit_width(uint64_t(nodes - 1)));
  const double tree = 2 * (double(group.ranks_per_node - 1) * step.intra_s + levels * step.tree_inter_s);
  return step.base_s + std::min(ring, tree);
}

static double latency_s(StepLatency step, CollectiveOp op, GroupPlacement group) {
  if (group.intra_node()) return step.base_s + latency_steps(op, group.size) * step.intra_s;
  return spanning_latency_s(step, op, group);
}

// The bus bandwidth of a group inside one node: the node's, except where its GPUs are linked pair by
// pair without a switch: a group of k drives at most each GPU's links to its k − 1 peers (NCCL
// builds rings over every link the group has), so 2 GPUs get their one link.
static double intra_group_bandwidth_Bps(const MachineProfile& machine, int64_t size) {
  const double node = machine.intra_bus_bandwidth_GBps;
  if (machine.intra_pair_bandwidth_GBps <= 0) return node * 1e9;
  return std::min(node, double(size - 1) * machine.intra_pair_bandwidth_GBps) * 1e9;
}

// The fraction of the simple protocol's bus bandwidth the low-latency protocol keeps (NCCL
// tuning.cc: ring LL busBw × 1/4 across nodes and for all-reduce, × 1/3 for the other collectives
// inside a node; the tree's 0.92 / 3.8 is within 3% of a quarter).
static double low_latency_bandwidth_fraction(CollectiveOp op, GroupPlacement group) {
  return group.intra_node() && op != CollectiveOp::all_reduce ? 1.0 / 3.0 : 1.0 / 4.0;
}

// The low-latency protocol's link for a collective of this op and group, under LL's cap for the
// nodes it spans: one, two, or more (NCCL tuning.cc llMaxBws[.][nNodes <= 2 ? nNodes − 1 : 2]).
static LinkEstimate low_latency_link(const LowLatencyProtocol& ll, CollectiveOp op, GroupPlacement group,
                                     double simple_bandwidth_Bps) {
  const int64_t nodes = group.nodes();
  const double cap_GBps = nodes == 1 ? ll.intra_bus_GBps : nodes == 2 ? ll.two_node_bus_GBps : ll.inter_bus_GBps;
  return {latency_s(low_latency_protocol(ll), op, group),
          std::min(simple_bandwidth_Bps * low_latency_bandwidth_fraction(op, group), cap_GBps * 1e9)};
}

// α + f · S / B (comm_model.h), on one link.
static double link_seconds(const LinkEstimate& link, CollectiveOp op, GroupPlacement group, double bytes) {
  return link.alpha_s + bus_factor(op, group.size) * bytes / link.bus_bandwidth_Bps;
}

// The measured fit's segment for these bytes, where the profile has a fit of this op and group.
static std::optional<LinkEstimate> measured_link(const MachineProfile& machine, CollectiveOp op, GroupPlacement group,
                                                 double bytes) {
  for (const CollectiveFit& fit : machine.collectives) {
    if (fit.op != op || fit.group_size != group.size || fit.ranks_per_node != group.ranks_per_node) {
      continue;
    }
    for (const LinkSegment& s : fit.segments) {
      if (bytes <= s.max_bytes || &s == &fit.segments.back()) {
        return LinkEstimate{s.alpha_us * 1e-6, s.bus_bandwidth_GBps * 1e9};
      }
    }
  }
  return std::nullopt;
}

LinkEstimate link_estimate(const MachineProfile& machine, CollectiveOp op, GroupPlacement group,
                           double bytes) {
  if (const std::optional<LinkEstimate> measured = measured_link(machine, op, group, bytes)) return *measured;
  const double intra = machine.intra_bus_bandwidth_GBps * 1e9;
  const double nic_share = double(machine.nics_per_node) * machine.nic_bandwidth_GBps * 1e9 *
                           double(group.ranks_per_node) / double(machine.gpus_per_node);
  const double bandwidth =
      group.intra_node() ? intra_group_bandwidth_Bps(machine, group.size) : std::min(intra, nic_share);
  const LinkEstimate simple{latency_s(simple_protocol(machine), op, group), bandwidth};
  if (!machine.low_latency.present()) return simple;
  const LinkEstimate low = low_latency_link(machine.low_latency, op, group, bandwidth);
  // A send/recv goes LL up to NCCL's fixed threshold (NCCL_P2P_LL_THRESHOLD, 16 KiB), not by the tuner.
  if (op == CollectiveOp::send_recv) return bytes <= kP2pLowLatencyBytes ? low : simple;
  return link_seconds(low, op, group, bytes) < link_seconds(simple, op, group, bytes) ? low : simple;
}

double collective_seconds(const MachineProfile& machine, CollectiveOp op, GroupPlacement group,
                          double bytes) {
  if (group.size <= 1 || bytes <= 0) return 0;
  return machine.collective_slowdown * link_seconds(link_estimate(machine, op, group, bytes), op, group, bytes);
}

}  // namespace axo
