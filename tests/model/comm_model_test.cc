// Collective times: the ring formulas and placement-aware bandwidth.
#include "model/comm_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "model/presets.h"

namespace axo {
namespace {

TEST(CommModel, Placement) {
  // 8 GPUs per node.
  EXPECT_TRUE(place_group(8, 1, 8, 4096).intra_node());
  EXPECT_TRUE(place_group(4, 2, 8, 4096).intra_node());
  EXPECT_EQ(place_group(4, 8, 8, 4096).ranks_per_node, 1);
  EXPECT_EQ(place_group(16, 1, 8, 4096).ranks_per_node, 8);
  EXPECT_EQ(place_group(16, 2, 8, 4096).ranks_per_node, 4);
  EXPECT_FALSE(place_group(16, 2, 8, 4096).intra_node());
}

// Ranks fill each node in turn (rank r on node r / gpus per node): a group that fits in a node
// straddles a boundary when its size x stride does not divide the node, and its ranks per node
// are the fewest an instance has on a node it occupies.
TEST(CommModel, GroupsThatDoNotDivideANodeStraddleItsBoundary) {
  // 3 consecutive ranks: inside one node on 8 GPUs; on 24, ranks 6, 7 | 8 span two, one on the second.
  EXPECT_TRUE(place_group(3, 1, 8, 6).intra_node());
  EXPECT_EQ(place_group(3, 1, 8, 24).ranks_per_node, 1);
  EXPECT_EQ(place_group(3, 1, 8, 12).ranks_per_node, 1);  // 12 GPUs are 8 + 4: the third group is 6, 7 | 8
  // 6 consecutive ranks on 8-GPU nodes: 6..11 splits 2 | 4, 12..17 4 | 2.
  EXPECT_EQ(place_group(6, 1, 8, 24).ranks_per_node, 2);
  // Larger than a node: 8 consecutive ranks on Summit's 6-GPU nodes: 0-5 | 6, 7.
  EXPECT_EQ(place_group(8, 1, 6, 48).ranks_per_node, 2);
  // Sizes that divide the node stay inside it, and whole nodes in a group keep gpus / stride.
  EXPECT_TRUE(place_group(4, 2, 8, 24).intra_node());
  EXPECT_EQ(place_group(16, 2, 8, 64).ranks_per_node, 4);
  // A straddling group crosses the NICs: slower than the same group inside a node.
  const MachineProfile m = load_machine("selene");
  EXPECT_LT(link_estimate(m, CollectiveOp::all_reduce, place_group(3, 1, 8, 24), 1e8).bus_bandwidth_Bps,
            link_estimate(m, CollectiveOp::all_reduce, place_group(3, 1, 8, 6), 1e8).bus_bandwidth_Bps);
}

// Every instance of every group shape, counted rank by rank, against place_group.
TEST(CommModel, PlacementIsTheFewestRanksAnyInstanceHasOnANode) {
  for (int64_t gpus_per_node : {4, 6, 8, 12}) {
    for (int64_t size = 2; size <= 12; ++size) {
      for (int64_t stride = 1; stride <= 14; ++stride) {
        for (int64_t blocks = 1; blocks <= 6; ++blocks) {
          const int64_t world = size * stride * blocks;
          int64_t fewest = size;
          for (int64_t base = 0; base < world; ++base) {
            if (base % (size * stride) >= stride) continue;  // not an instance's first rank
            std::map<int64_t, int64_t> on_node;
            for (int64_t k = 0; k < size; ++k) ++on_node[(base + k * stride) / gpus_per_node];
            for (const auto& [node, count] : on_node) fewest = std::min(fewest, count);
          }
          EXPECT_EQ(place_group(size, stride, gpus_per_node, world).ranks_per_node, fewest)
              << size << " ranks " << stride << " apart, " << world << " on " << gpus_per_node << "-GPU nodes";
        }
      }
    }
  }
}

// Two dimensions together (data x context): where one lies just inside the other they are one
// group; counted rank by rank, context 3 inside data 8 on 24 GPUs is all 24, 8 to a node, where
// the product of the parts' placements (1 x 2) said 2.
TEST(CommModel, TwoAdjacentDimensionsAreOneGroup) {
  EXPECT_EQ(place_dimensions(std::vector<GridSpan>{{8, 3}, {3, 1}}, 8, 24).ranks_per_node, 8);
  EXPECT_EQ(place_dimensions(std::vector<GridSpan>{{3, 1}, {8, 3}}, 8, 24).ranks_per_node, 8);  // either order
  EXPECT_EQ(place_dimensions(std::vector<GridSpan>{{3, 1}, {2, 3}}, 4, 12).ranks_per_node, 2);  // 0-3 | 4, 5 and 6, 7 | 8-11
  // Not adjacent (a dimension of 2 between them): a box of the two, as before.
  EXPECT_EQ(place_dimensions(std::vector<GridSpan>{{2, 1}, {4, 4}}, 8, 32).ranks_per_node,
            product_group(place_group(2, 1, 8, 32), place_group(4, 4, 8, 32)).ranks_per_node);
}

// Three dimensions (z x context x data): the adjacent ones are one group, the one apart a box with
// it. z 2 at stride 2 and data 3 at 4 are one group of 6 at stride 2 (on 4-GPU nodes 2 a node:
// 0, 2 | 4, 6 | 8, 10); context 2 at 12 lies past them, a node or more away; size 1 places nothing.
TEST(CommModel, SeveralDimensionsJoinWhereAdjacent) {
  const GroupPlacement group = place_dimensions(std::vector<GridSpan>{{3, 4}, {1, 1}, {2, 12}, {2, 2}}, 4, 24);
  EXPECT_EQ(group.size, 12);
  EXPECT_EQ(group.ranks_per_node, place_group(6, 2, 4, 24).ranks_per_node * place_group(2, 12, 4, 24).ranks_per_node);
  EXPECT_EQ(group.ranks_per_node, 2);
  // All three side by side: one group of 12 at stride 2, 2 on each 4-GPU node.
  EXPECT_EQ(place_dimensions(std::vector<GridSpan>{{3, 4}, {2, 12}, {2, 2}}, 8, 48).ranks_per_node,
            place_group(12, 2, 8, 48).ranks_per_node);
}

TEST(CommModel, RingFormulasIntraNode) {
  const MachineProfile m = load_machine("selene");
  const double S = 1e9, B = m.intra_bus_bandwidth_GBps * 1e9, a = m.intra_alpha_us * 1e-6;
  const GroupPlacement g = place_group(8, 1, 8, 4096);
  EXPECT_NEAR(collective_seconds(m, CollectiveOp::all_gather, g, S), 7 * a + S * 7 / (8 * B), 1e-12);
  EXPECT_NEAR(collective_seconds(m, CollectiveOp::reduce_scatter, g, S), 7 * a + S * 7 / (8 * B), 1e-12);
  EXPECT_NEAR(collective_seconds(m, CollectiveOp::all_reduce, g, S), 14 * a + 2 * S * 7 / (8 * B), 1e-12);
  EXPECT_EQ(collective_seconds(m, CollectiveOp::all_reduce, place_group(1, 1, 8, 4096), S), 0);
}

// Perlmutter's GPUs are linked pair by pair (4 NVLinks, 100 GB/s): 2 GPUs get their one link, 3 or 4
// the node's 200 GB/s; behind a switch (selene) 2 GPUs get the node's too.
TEST(CommModel, PairwiseLinkedGpusGiveTwoOfThemTheirOneLink) {
  const MachineProfile perlmutter = load_machine("perlmutter");
  ASSERT_EQ(perlmutter.intra_pair_bandwidth_GBps, 100);
  const auto bandwidth = [](const MachineProfile& m, int64_t size) {
    return link_estimate(m, CollectiveOp::all_gather, place_group(size, 1, m.gpus_per_node, 64), 1e8).bus_bandwidth_Bps;
  };
  EXPECT_NEAR(bandwidth(perlmutter, 2), 100e9, 1);
  EXPECT_NEAR(bandwidth(perlmutter, 4), 200e9, 1);
  const MachineProfile selene = load_machine("selene");
  EXPECT_NEAR(bandwidth(selene, 2), selene.intra_bus_bandwidth_GBps * 1e9, 1);
  // The field travels with the profile.
  EXPECT_EQ(machine_profile_from_yaml(to_yaml(perlmutter), "p").intra_pair_bandwidth_GBps, 100);
}

TEST(CommModel, GroupsAcrossNodesShareTheNics) {
  const MachineProfile m = load_machine("selene");  // 8 GPUs, 8 NICs of 25 GB/s
  // One rank per node: eight groups share the node's 200 GB/s, 25 GB/s each.
  EXPECT_NEAR(link_estimate(m, CollectiveOp::all_reduce, place_group(4, 8, 8, 4096), 1e9).bus_bandwidth_Bps, 25e9, 1);
  // Four ranks per node: two groups share it, 100 GB/s each.
  EXPECT_NEAR(link_estimate(m, CollectiveOp::all_reduce, place_group(16, 2, 8, 4096), 1e9).bus_bandwidth_Bps, 100e9, 1);
  // Never faster than the intra-node link.
  EXPECT_LE(link_estimate(m, CollectiveOp::all_reduce, place_group(16, 1, 8, 4096), 1e9).bus_bandwidth_Bps,
            m.intra_bus_bandwidth_GBps * 1e9);
}

TEST(CommModel, AcrossNodesOnlyTheStepsBetweenNodesPayTheNetworkLatency) {
  const MachineProfile m = load_machine("selene");  // 8 GPUs a node
  const double intra = m.intra_alpha_us * 1e-6, inter = m.inter_alpha_us * 1e-6;
  // 512 ranks, 8 a node (64 nodes): an all-gather's 511 ring steps, 63 across nodes (NCCL tuning.cc).
  const LinkEstimate gather = link_estimate(m, CollectiveOp::all_gather, place_group(512, 1, 8, 4096), 1e9);
  EXPECT_NEAR(gather.alpha_s, 448 * intra + 63 * inter, 1e-12);
  // One rank a node: every step crosses a node.
  EXPECT_NEAR(link_estimate(m, CollectiveOp::reduce_scatter, place_group(4, 8, 8, 4096), 1e9).alpha_s, 3 * inter, 1e-12);
  // An all-reduce takes the double binary tree where its latency is lower:
  // 2·(7·α_intra + log2(64)·α_inter) against the ring's 2·448·α_intra + 2·63·α_inter.
  const LinkEstimate reduce = link_estimate(m, CollectiveOp::all_reduce, place_group(512, 1, 8, 4096), 1e9);
  EXPECT_NEAR(reduce.alpha_s, 2 * (7 * intra + 6 * inter), 1e-12);
  // Two nodes: the ring (14·α_intra + 2·α_inter) beats the tree (2·(7·α_intra + α_inter)) or ties.
  EXPECT_NEAR(link_estimate(m, CollectiveOp::all_reduce, place_group(16, 1, 8, 4096), 1e9).alpha_s,
              std::min(28 * intra + 2 * inter, 2 * (7 * intra + inter)), 1e-12);
  // A pair across nodes: one network hop.
  EXPECT_NEAR(link_estimate(m, CollectiveOp::send_recv, GroupPlacement{2, 1}, 1e6).alpha_s, inter, 1e-12);
}

TEST(CommModel, MeasuredFitsReplaceTheModel) {
  MachineProfile m = load_machine("selene");
  m.collectives.push_back({CollectiveOp::all_reduce, 4, 4, {{1024, 2, 1}, {1e18, 10, 50}}});
  const GroupPlacement g = place_group(4, 1, 8, 4096);
  EXPECT_NEAR(collective_seconds(m, CollectiveOp::all_reduce, g, 512), 2e-6 + 1.5 * 512 / 1e9, 1e-15);
  EXPECT_NEAR(collective_seconds(m, CollectiveOp::all_reduce, g, 1e6), 10e-6 + 1.5 * 1e6 / 50e9, 1e-15);
  // Other ops are priced as without the fit: on the simple protocol's ring at 100 MB.
  EXPECT_EQ(collective_seconds(m, CollectiveOp::all_gather, g, 1e6),
            collective_seconds(load_machine("selene"), CollectiveOp::all_gather, g, 1e6));
  EXPECT_NEAR(collective_seconds(m, CollectiveOp::all_gather, g, 1e8),
              3 * m.intra_alpha_us * 1e-6 + 0.75 * 1e8 / (m.intra_bus_bandwidth_GBps * 1e9), 1e-15);
}

// A small collective takes NCCL's low-latency protocol: its base latency and LL's per-step latency,
// at a quarter of the bandwidth (a third for a node's all-gather) under LL's own cap; a large one
// the simple protocol's alpha_us at the full bandwidth (NCCL tuning.cc). Selene's 230 GB/s keeps
// both fractions under the 87.7 GB/s cap.
TEST(CommModel, SmallCollectivesTakeTheLowLatencyProtocol) {
  const MachineProfile m = load_machine("selene");
  const LowLatencyProtocol& ll = m.low_latency;
  ASSERT_TRUE(ll.present());
  const double B = m.intra_bus_bandwidth_GBps * 1e9;
  ASSERT_LT(B / 3, ll.intra_bus_GBps * 1e9);
  const GroupPlacement node = place_group(8, 1, 8, 4096);
  const LinkEstimate small = link_estimate(m, CollectiveOp::all_reduce, node, 4096);
  EXPECT_NEAR(small.alpha_s, (ll.base_us + 14 * ll.intra_step_us) * 1e-6, 1e-12);
  EXPECT_NEAR(small.bus_bandwidth_Bps, B / 4, 1);
  EXPECT_NEAR(link_estimate(m, CollectiveOp::all_gather, node, 4096).bus_bandwidth_Bps, B / 3, 1);
  const LinkEstimate large = link_estimate(m, CollectiveOp::all_reduce, node, 1e9);
  EXPECT_NEAR(large.alpha_s, 14 * m.intra_alpha_us * 1e-6, 1e-12);
  EXPECT_NEAR(large.bus_bandwidth_Bps, B, 1);
}

// Across nodes: a ring's steps inside a node cost at least the network's post overhead, those that
// cross a node LL's network step, under LL's cap across two nodes or more; a tree's levels LL's
// tree step.
TEST(CommModel, AcrossNodesTheLowLatencyProtocolPaysTheNetworksPost) {
  const MachineProfile m = load_machine("selene");  // AMD hosts: 2 us a post
  const LowLatencyProtocol& ll = m.low_latency;
  ASSERT_GT(ll.net_overhead_us, ll.intra_step_us);
  // 16 ranks, 8 a node: an all-gather's 15 steps, 1 across nodes.
  const LinkEstimate gather = link_estimate(m, CollectiveOp::all_gather, place_group(16, 1, 8, 4096), 4096);
  EXPECT_NEAR(gather.alpha_s, (ll.base_us + 14 * ll.net_overhead_us + ll.inter_step_us) * 1e-6, 1e-12);
  EXPECT_NEAR(gather.bus_bandwidth_Bps, ll.two_node_bus_GBps * 1e9, 1);  // 200 GB/s / 4 over the cap
  ASSERT_GT(ll.two_node_bus_GBps, ll.inter_bus_GBps);  // NCCL's 22.5 and 19.0 GB/s on AMD hosts
  EXPECT_NEAR(link_estimate(m, CollectiveOp::all_gather, place_group(24, 1, 8, 4096), 4096).bus_bandwidth_Bps,
              ll.inter_bus_GBps * 1e9, 1);  // three nodes
  // One rank on each of 8 nodes: the tree's 3 levels, both ways.
  EXPECT_NEAR(link_estimate(m, CollectiveOp::all_reduce, place_group(8, 8, 8, 4096), 4096).alpha_s,
              (ll.base_us + 2 * 3 * ll.tree_inter_step_us) * 1e-6, 1e-12);
}

// A send/recv takes LL up to NCCL's 16 KiB threshold and the simple protocol beyond, whichever
// would be faster (a point-to-point's protocol is not the tuner's).
TEST(CommModel, ASendRecvTakesTheLowLatencyProtocolUpTo16KiB) {
  const MachineProfile m = load_machine("dgx-h100");
  const GroupPlacement pair{2, 2};
  EXPECT_NEAR(link_estimate(m, CollectiveOp::send_recv, pair, kP2pLowLatencyBytes).alpha_s,
              (m.low_latency.base_us + m.low_latency.intra_step_us) * 1e-6, 1e-12);
  EXPECT_NEAR(link_estimate(m, CollectiveOp::send_recv, pair, kP2pLowLatencyBytes + 1).alpha_s,
              m.intra_alpha_us * 1e-6, 1e-12);
}

// The physics tester's inversion: an 8-rank all-reduce inside one NVSwitch node priced 112 us at
// 8 bytes (14 simple-protocol steps of 8 us), slower than across 8 nodes (a tree, 72 us). On every
// preset with a low-latency protocol, a group inside a node is never slower than the same group
// one rank a node, and a collective's time never falls as its bytes grow.
TEST(CommModel, AGroupInsideANodeIsNeverSlowerThanAcrossNodes) {
  int presets = 0;
  for (const std::string& name : list_presets("machines")) {
    const MachineProfile m = load_machine(name);
    if (!m.low_latency.present()) continue;
    ++presets;
    const int64_t g = m.gpus_per_node, world = 64 * g;
    for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
      for (int64_t size = 2; size <= std::min<int64_t>(g, 16); size *= 2) {
        if (g % size != 0) continue;
        double previous = 0;
        for (double bytes = 8; bytes <= 4e9; bytes *= 4) {
          const double inside = collective_seconds(m, op, place_group(size, 1, g, world), bytes);
          const double across = collective_seconds(m, op, place_group(size, g, g, world), bytes);
          EXPECT_LE(inside, across) << name << " " << to_string(op) << " over " << size << ", " << bytes << " B";
          EXPECT_GE(inside, previous) << name << " " << to_string(op) << " over " << size << ", " << bytes << " B";
          previous = inside;
        }
      }
    }
  }
  EXPECT_EQ(presets, 10);  // every GPU preset but frontier's (RCCL)
}

// Without a low_latency section (a CPU calibration over MPI) every collective is the simple
// protocol's, whatever its size.
TEST(CommModel, AProfileWithoutTheLowLatencyProtocolPricesTheSimpleOneAlone) {
  MachineProfile m = load_machine("selene");
  m.low_latency = {};
  const GroupPlacement g = place_group(8, 1, 8, 4096);
  EXPECT_NEAR(collective_seconds(m, CollectiveOp::all_reduce, g, 8),
              14 * m.intra_alpha_us * 1e-6 + 2 * 8 * 7 / (8 * m.intra_bus_bandwidth_GBps * 1e9), 1e-15);
}

TEST(CommModel, AProductGroupMultipliesSizesAndMembersPerNode) {
  // data 4 outside context 2 (stride 1), 8 GPUs a node: context pairs in a
  // node, data ranks 2 apart so 4 of them share it: the 8 ranks all do.
  const GroupPlacement both = product_group(place_group(2, 1, 8, 4096), place_group(4, 2, 8, 4096));
  EXPECT_EQ(both.size, 8);
  EXPECT_EQ(both.ranks_per_node, 8);
  EXPECT_TRUE(both.intra_node());
  // The same 8 ranks as one contiguous group.
  EXPECT_EQ(place_group(8, 1, 8, 4096).ranks_per_node, both.ranks_per_node);
  const GroupPlacement apart = product_group(place_group(2, 1, 8, 4096), place_group(4, 8, 8, 4096));
  EXPECT_EQ(apart.ranks_per_node, 2);
}

}  // namespace
}  // namespace axo
