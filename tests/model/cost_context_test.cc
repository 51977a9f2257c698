// Ring attention over the context group (model/cost_context.h), against
// hand-computed bytes and exposed time.
#include "model/cost_context.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/presets.h"

namespace axo {
namespace {

TEST(CostContext, RingHopsMatchAHandComputation) {
  const TransformerSpec spec = load_model("llama3-8b");      // s 8192, 32 heads, 8 KV heads, d 128, bf16
  const MachineProfile machine = load_machine("dgx-h100");  // 8 GPUs per node
  ASSERT_TRUE(machine.collectives.empty());  // the link model, not a measured fit
  ParallelConfig c;
  c.y = 2, c.context = 4, c.microbatch = 2, c.data = 8;  // order xyzcdp: context ranks 2 apart, 8 in a node
  const LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, shapes};
  // K and V of the rank's 2 sequences × 8192/4 tokens × (8/2 heads × 128) × 2 bytes.
  const double bytes = 2.0 * 2 * 2048 * (4 * 128) * 2;
  EXPECT_DOUBLE_EQ(ring_hop_bytes(in), bytes);
  MachineProfile fp32_sends = machine;  // axo's executor sends its fp32 views (stack.activation_comm_dtype)
  fp32_sends.activation_comm_dtype = ActivationCommDtype::fp32;
  EXPECT_DOUBLE_EQ(ring_hop_bytes({spec, fp32_sends, c, shapes}), 2 * bytes);

  const LayerCompute layer = layer_compute(in, CostRecorder());
  ASSERT_GT(layer.attention_forward, 0);
  std::vector<CostItem> items;
  const RingAttention ring = ring_attention(in, layer, CostRecorder(&items, 1, 1));
  // Intra-node send/recv: t = slowdown · (α + bytes / B); 3 hops, each hidden
  // under a quarter of the attention compute, which runs at 1 − σ of its
  // speed while the hop is in flight (overlap interference), plus the first
  // hop's latency.
  const double k = machine.collective_slowdown, alpha = machine.intra_alpha_us * 1e-6;
  const double bandwidth = machine.intra_bus_bandwidth_GBps * 1e9, sigma = machine.overlap_interference;
  ASSERT_GT(sigma, 0);
  auto exposed = [&](double hop_bytes, double compute) {
    const double hop = k * (alpha + hop_bytes / bandwidth), window = compute / 4;
    const double hidden = std::min(window, hop - sigma * std::min(hop, window));
    return k * alpha + 3 * (hop - machine.overlap_efficiency * hidden);
  };
  EXPECT_DOUBLE_EQ(ring.forward, exposed(bytes, layer.attention_forward));
  EXPECT_DOUBLE_EQ(ring.backward, exposed(2 * bytes, layer.attention_backward));
  EXPECT_EQ(ring.recompute, 0);  // no recompute

  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].name, "ring attention: 3 hops of key/value blocks");
  EXPECT_EQ(items[0].group, GridDim::context);
  EXPECT_EQ(items[0].group_size, 4);
  EXPECT_EQ(items[0].ranks_per_node, 4);
  EXPECT_DOUBLE_EQ(items[0].bytes, bytes);
  EXPECT_DOUBLE_EQ(items[0].bandwidth_GBps, machine.intra_bus_bandwidth_GBps);
  EXPECT_DOUBLE_EQ(items[0].exposed, ring.forward);
  EXPECT_EQ(items[1].phase, CostPhase::backward);
  EXPECT_DOUBLE_EQ(items[1].bytes, 2 * bytes);
}

// A ring over two nodes is as fast as its slowest hop, the one that crosses: one flow between two
// GPUs, on one GPU's share of the NICs as a pipeline's send/recv, not on the NICs of the 8 ranks the
// ring has on each node (a collective's channels).
TEST(CostContext, AHopAcrossNodesIsOneFlowAsAPipelineHop) {
  const TransformerSpec spec = load_model("llama3-8b");
  const MachineProfile machine = load_machine("dgx-h100");  // 8 GPUs and 8 NICs per node
  ASSERT_GT(machine.nics_per_node, 1);
  ParallelConfig c;
  c.context = 16;  // ranks 0-7 on one node, 8-15 on the next
  const LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, shapes};
  std::vector<CostItem> items;
  ring_attention(in, layer_compute(in, CostRecorder()), CostRecorder(&items, 1, 1));
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0].ranks_per_node, 8);
  const GroupPlacement across{2, 1};
  EXPECT_DOUBLE_EQ(items[0].bandwidth_GBps,
                   link_estimate(machine, CollectiveOp::send_recv, across, items[0].bytes).bus_bandwidth_Bps / 1e9);
  EXPECT_LT(items[0].bandwidth_GBps, machine.nics_per_node * machine.nic_bandwidth_GBps);
}

TEST(CostContext, RecomputeRunsTheRingAgainAndOneRankHasNoRing) {
  const TransformerSpec spec = load_model("llama3-8b");
  const MachineProfile machine = load_machine("dgx-h100");
  ParallelConfig c;
  c.context = 2, c.recompute = Recompute::selective;
  LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, shapes};
  const LayerCompute layer = layer_compute(in, CostRecorder());
  const RingAttention ring = ring_attention(in, layer, CostRecorder());
  EXPECT_GT(ring.forward, 0);
  EXPECT_DOUBLE_EQ(ring.recompute, ring.forward);
  // torchtitan's per-op selective recompute keeps the attention kernel's output: no ring again, and
  // none of the backward window is the ring's recompute.
  MachineProfile per_op = machine;
  per_op.selective = SelectiveKind::per_op;
  const CostInputs kept{spec, per_op, c, shapes};
  EXPECT_FALSE(recompute_runs_attention(kept));
  EXPECT_EQ(ring_attention(kept, layer_compute(kept, CostRecorder()), CostRecorder()).recompute, 0);

  ParallelConfig one;
  shapes = local_shapes(spec, one);
  const CostInputs single{spec, machine, one, shapes};
  std::vector<CostItem> items;
  const RingAttention none = ring_attention(single, layer_compute(single, CostRecorder()), CostRecorder(&items, 1, 1));
  EXPECT_EQ(none.forward + none.backward + none.recompute, 0);
  EXPECT_TRUE(items.empty());
}

TEST(CostContext, TheLayerComputesOnItsShareOfTheSequence) {
  const TransformerSpec spec = load_model("llama3-8b");
  ParallelConfig c;
  c.context = 4;
  const LocalShapes shapes = local_shapes(spec, c);
  EXPECT_DOUBLE_EQ(shapes.tokens, 8192.0 / 4);  // the GEMMs' m shrinks by c
  EXPECT_DOUBLE_EQ(shapes.linears[0].m, 8192.0 / 4);
  EXPECT_DOUBLE_EQ(shapes.query_seq, 2048);
  EXPECT_DOUBLE_EQ(shapes.seq, 8192);  // against every key
}

}  // namespace
}  // namespace axo
