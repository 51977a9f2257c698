// One layer's tensor-parallel collectives and overlap (model/cost_tp_comm.h).
#include "model/cost_tp_comm.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

struct Case {
  TransformerSpec spec = load_model("gpt3-13b");
  MachineProfile machine = load_machine("perlmutter");
  ParallelConfig config;
  LayerComm run(std::vector<CostItem>* items = nullptr) const {
    const LocalShapes shapes = local_shapes(spec, config);
    const CostInputs in{spec, machine, config, shapes};
    return layer_comm(in, layer_compute(in, CostRecorder()), CostRecorder(items, 1, 1));
  }
};

double exposed_by_phase(const std::vector<CostItem>& items, CostPhase phase) {
  double sum = 0;
  for (const CostItem& item : items) sum += item.phase == phase ? item.exposed : 0;
  return sum;
}

TEST(CostTpComm, ItemsShareOutExactlyWhatIsExposed) {
  Case t;
  t.config.x = 2, t.config.y = 2, t.config.z = 2, t.config.microbatch = 2, t.config.recompute = Recompute::full;
  std::vector<CostItem> items;
  const LayerComm comm = t.run(&items);
  EXPECT_NEAR(exposed_by_phase(items, CostPhase::forward), comm.forward, 1e-9 * comm.forward);
  EXPECT_NEAR(exposed_by_phase(items, CostPhase::recompute), comm.recompute, 1e-9 * comm.recompute);
  EXPECT_NEAR(exposed_by_phase(items, CostPhase::backward), comm.backward, 1e-9 * comm.backward);
  for (const CostItem& item : items) EXPECT_LE(item.exposed, item.seconds * (1 + 1e-12)) << item.name;
}

// With context parallelism the ring's hops hide under the attention; the Z weight traffic hides
// under the rest of the layer, so a faster attention kernel never exposes more than it saves.
TEST(CostTpComm, AFasterAttentionNeverSlowsARingWithZTraffic) {
  Case t;
  t.machine = load_machine("dgx-h100");
  t.config.context = 2, t.config.z = 2, t.config.microbatch = 2, t.config.recompute = Recompute::selective;
  double previous = 1e300;
  for (double efficiency : {0.1, 0.178, 0.3, 0.6, 0.9}) {
    t.machine.attention_efficiency = efficiency;
    const LocalShapes shapes = local_shapes(t.spec, t.config);
    const CostInputs in{t.spec, t.machine, t.config, shapes};
    const LayerCompute layer = layer_compute(in, CostRecorder());
    const LayerComm comm = layer_comm(in, layer, CostRecorder());
    const double paid = layer.forward + layer.recompute + layer.backward + comm.forward + comm.recompute + comm.backward;
    EXPECT_LE(paid, previous * (1 + 1e-12)) << efficiency;
    previous = paid;
  }
}

// axo's executor sends its activations in fp32 and reduces fp32 copies of its gradients in 2-byte
// training (stack.activation_comm_dtype fp32, reduce_dtype fp32_copy): the partial sums, dX and
// dW's reduce-scatter move twice the bf16 bytes; the weights are gathered as stored, the norms'
// statistics summed in fp32 either way.
TEST(CostTpComm, AStackSendingFp32MovesTwiceTheBytesButGathersTheWeightsAsStored) {
  Case t;
  t.spec.precision = Precision::bf16;
  t.config.x = 2, t.config.y = 2, t.config.z = 2, t.config.microbatch = 2;
  std::vector<CostItem> as_computed, in_fp32;
  t.run(&as_computed);
  t.machine.activation_comm_dtype = ActivationCommDtype::fp32, t.machine.reduce_dtype = ReduceDtype::fp32_copy;
  t.run(&in_fp32);
  ASSERT_EQ(as_computed.size(), in_fp32.size());
  int gathers = 0, doubled = 0;
  for (size_t i = 0; i < as_computed.size(); ++i) {
    if (!as_computed[i].group) continue;
    const std::string& name = as_computed[i].name;
    const bool weights = name.find("weights") != std::string::npos;
    const bool as_before = weights || name.find("norm statistics") != std::string::npos;
    EXPECT_DOUBLE_EQ(in_fp32[i].bytes, (as_before ? 1 : 2) * as_computed[i].bytes) << name;
    if (weights) ++gathers;
    if (!as_before) ++doubled;
  }
  EXPECT_EQ(gathers, 8);   // four linears, forward and backward
  EXPECT_EQ(doubled, 12);  // each linear's partial sums, dX and dW
}

TEST(CostTpComm, OverlapOffOrAtZeroEfficiencyExposesEverySecond) {
  Case t;
  t.config.x = 2, t.config.y = 2, t.config.z = 2, t.config.microbatch = 2;
  t.config.overlap = false;
  std::vector<CostItem> items;
  const LayerComm off = t.run(&items);
  double seconds = 0;
  for (const CostItem& item : items) seconds += item.seconds;
  EXPECT_NEAR(off.total(), seconds, 1e-12 * seconds);
  t.config.overlap = true;
  const LayerComm on = t.run();
  EXPECT_LT(on.total(), off.total());
  t.machine.overlap_efficiency = 0;
  EXPECT_NEAR(t.run().total(), off.total(), 1e-12 * off.total());
}

TEST(CostTpComm, SequenceParallelismGathersAndScattersOverY) {
  Case t;
  t.config.y = 4, t.config.sequence_parallel = true;
  std::vector<CostItem> items;
  t.run(&items);
  int gathers = 0, partial_all_reduces = 0;
  for (const CostItem& item : items) {
    gathers += item.name == "all_gather sequence-parallel input (qkv)";
    partial_all_reduces += item.name.rfind("all_reduce partial sums", 0) == 0;
    if (item.name == "all_gather sequence-parallel input (qkv)") {
      EXPECT_EQ(item.group, GridDim::y);
      EXPECT_DOUBLE_EQ(item.bytes, 2048.0 * 5120 * 2);  // the whole [T, h] input, bf16
    }
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_EQ(partial_all_reduces, 0);
}

// Under fp8 the sequence-parallel all-gathers move the fp8 tensors (Transformer
// Engine's LayerNormLinear gathers its fp8 norm output and a row-parallel
// layer its fp8 output gradient; torchao's Float8ColwiseParallel likewise):
// one byte an element, half of bf16's; the reduce-scatters stay bf16.
TEST(CostTpComm, Fp8SequenceParallelGathersMoveOneByteAnElement) {
  Case t;
  t.config.y = 4, t.config.sequence_parallel = true;
  auto bytes = [&t](const std::string& op) {
    std::vector<CostItem> items;
    t.run(&items);
    double sum = 0;
    for (const CostItem& item : items) sum += item.group == GridDim::y && item.name.rfind(op, 0) == 0 ? item.bytes : 0;
    return sum;
  };
  const double gather = bytes("all_gather"), scatter = bytes("reduce_scatter");
  // bf16: forward inputs of qkv and mlp_up, again for dW, the output gradients of attn_out and mlp_down.
  EXPECT_DOUBLE_EQ(gather, 2048.0 * 5120 * 2 * 6);
  t.spec.precision = Precision::fp8;
  EXPECT_DOUBLE_EQ(bytes("all_gather"), gather / 2);
  EXPECT_DOUBLE_EQ(bytes("reduce_scatter"), scatter);
}

// With z > 1 the Y group gathers and scatters the rows of this Z rank's
// sequences (microbatch/z of them), beside the Z group's weight traffic.
TEST(CostTpComm, SequenceParallelismWithZMovesEachZRanksRowsOverY) {
  Case t;
  t.config.y = 4, t.config.z = 2, t.config.microbatch = 4, t.config.sequence_parallel = true;
  std::vector<CostItem> items;
  t.run(&items);
  int y_gathers = 0, y_scatters = 0, z_items = 0, all_reduces = 0;
  for (const CostItem& item : items) {
    z_items += item.group == GridDim::z;
    all_reduces += item.name.rfind("all_reduce", 0) == 0 && item.group != GridDim::x;
    if (item.name == "all_gather sequence-parallel input (qkv)") {
      ++y_gathers;
      EXPECT_EQ(item.group, GridDim::y);
      EXPECT_DOUBLE_EQ(item.bytes, 2 * 2048.0 * 5120 * 2);  // two sequences' [2T, h] input, bf16
    }
    if (item.name == "reduce_scatter partial sums (attn_out)") {
      ++y_scatters;
      EXPECT_EQ(item.group, GridDim::y);
      EXPECT_DOUBLE_EQ(item.bytes, 2 * 2048.0 * 5120 * 2);
    }
  }
  EXPECT_EQ(y_gathers, 1);
  EXPECT_EQ(y_scatters, 1);
  EXPECT_GT(z_items, 0);
  EXPECT_EQ(all_reduces, 0);
}

TEST(CostTpComm, PerBlockGatherMovesTheSameBytesInAQuarterOfTheCollectives) {
  Case t;
  t.config.z = 4, t.config.microbatch = 4, t.config.recompute = Recompute::full, t.config.overlap = false;
  auto z_items = [&t](WeightGather gather, double& bytes, double& seconds) {
    t.machine.weight_gather = gather;
    std::vector<CostItem> items;
    t.run(&items);
    int count = 0;
    bytes = seconds = 0;
    for (const CostItem& item : items) {
      if (item.group != GridDim::z) continue;
      ++count, bytes += item.phase == CostPhase::recompute ? 0 : item.bytes, seconds += item.seconds;
      if (gather == WeightGather::per_block) {
        EXPECT_NE(item.phase, CostPhase::recompute) << item.name;
      }
    }
    return count;
  };
  double linear_bytes = 0, linear_s = 0, block_bytes = 0, block_s = 0;
  EXPECT_EQ(z_items(WeightGather::per_linear, linear_bytes, linear_s), 16);  // 4 layers x (fwd, recompute, bwd AG, RS)
  // FSDP: gather for forward, once more for backward (the recompute shares it), reduce-scatter.
  EXPECT_EQ(z_items(WeightGather::per_block, block_bytes, block_s), 3);
  EXPECT_NEAR(block_bytes, linear_bytes, 1e-9 * linear_bytes);
  EXPECT_LT(block_s, linear_s);
}

// stack.reduce_dtype fp32 (torchtitan's FSDP2, Composer's DEFAULT): the Z reduce-scatters of
// the gradients move 4-byte elements; the weight all-gathers keep the model's precision.
TEST(CostTpComm, Fp32ReductionDoublesTheReduceScatterNotTheGather) {
  Case t;
  t.config.z = 4, t.config.microbatch = 4;
  t.machine.weight_gather = WeightGather::per_block;
  auto z_bytes = [&t](const std::string& op) {
    std::vector<CostItem> items;
    t.run(&items);
    double bytes = 0;
    for (const CostItem& item : items) {
      bytes += item.group == GridDim::z && item.name.rfind(op, 0) == 0 ? item.bytes : 0;
    }
    return bytes;
  };
  const double gather = z_bytes("all_gather"), scatter = z_bytes("reduce_scatter");
  ASSERT_GT(gather, 0);
  ASSERT_GT(scatter, 0);
  t.machine.reduce_dtype = ReduceDtype::fp32;
  EXPECT_DOUBLE_EQ(z_bytes("reduce_scatter"), 2 * scatter);  // a bf16 model's 2 bytes become 4
  EXPECT_DOUBLE_EQ(z_bytes("all_gather"), gather);
}

// FSDP's BACKWARD_POST gathers the next block's weights only after the current
// block's gradients: nothing to hide under, so the whole gather is exposed;
// BACKWARD_PRE hides it under the backward compute.
TEST(CostTpComm, BackwardGatherAfterTheGradientsIsExposed) {
  Case t;
  t.machine = load_machine("dgx-h100");
  t.machine.weight_gather = WeightGather::per_block;
  t.config.z = 8, t.config.microbatch = 16;
  auto backward_gather = [&t](BackwardPrefetch prefetch, double& seconds, double& exposed) {
    t.machine.backward_prefetch = prefetch;
    std::vector<CostItem> items;
    const LayerComm comm = t.run(&items);
    for (const CostItem& item : items) {
      if (item.phase == CostPhase::backward && item.name.rfind("all_gather block weights", 0) == 0) {
        seconds = item.seconds, exposed = item.exposed;
      }
    }
    return comm.backward;
  };
  double pre_s = 0, pre_exposed = 0, post_s = 0, post_exposed = 0;
  const double pre = backward_gather(BackwardPrefetch::pre, pre_s, pre_exposed);
  const double post = backward_gather(BackwardPrefetch::post, post_s, post_exposed);
  ASSERT_GT(pre_s, 0);
  EXPECT_DOUBLE_EQ(post_s, pre_s);  // the same collective
  EXPECT_LT(pre_exposed, 0.5 * pre_s);
  EXPECT_DOUBLE_EQ(post_exposed, post_s);
  EXPECT_NEAR(post - pre, post_s - pre_exposed, 1e-9 * post_s);
}

// Eager DTensor TP (stack.tp_collectives exposed) puts each backward TP
// collective Megatron-LM hides under a GEMM on the critical path: the same
// collectives, each exposed in full; the forward is unchanged.
TEST(CostTpComm, ExposedTpCollectivesCostTheirFullTimeInBackward) {
  {
    Case t;
    t.machine = load_machine("dgx-h100");
    t.config.y = 8, t.config.z = 4, t.config.microbatch = 4;
    std::vector<CostItem> overlapped_items, exposed_items;
    const LayerComm overlapped = t.run(&overlapped_items);
    t.machine.tp_collectives = TpCollectives::exposed;
    const LayerComm exposed = t.run(&exposed_items);
    ASSERT_EQ(exposed_items.size(), overlapped_items.size());
    double hidden_y = 0;
    for (size_t i = 0; i < exposed_items.size(); ++i) {
      const CostItem &before = overlapped_items[i], &after = exposed_items[i];
      EXPECT_EQ(after.name, before.name);
      EXPECT_DOUBLE_EQ(after.seconds, before.seconds);
      if (after.group == GridDim::y) {
        EXPECT_DOUBLE_EQ(after.exposed, after.seconds) << after.name;
        hidden_y += before.seconds - before.exposed;
      }
    }
    EXPECT_GT(hidden_y, 0) << "overlapped hid some Y traffic";
    EXPECT_DOUBLE_EQ(exposed.forward, overlapped.forward);
    EXPECT_GT(exposed.backward, overlapped.backward);
    EXPECT_NEAR(exposed.backward - overlapped.backward, hidden_y, 1e-9 * exposed.backward);
  }
}

// With sequence parallelism eager DTensor keeps the gathered input its forward
// made, so its backward has no second gather for dW; the dX reduce-scatter is
// exposed in full.
TEST(CostTpComm, ExposedSequenceParallelBackwardHasNoSecondGather) {
  Case t;
  t.machine = load_machine("dgx-h100");
  t.config.y = 8, t.config.z = 4, t.config.microbatch = 4, t.config.sequence_parallel = true;
  std::vector<CostItem> overlapped_items, exposed_items;
  const LayerComm overlapped = t.run(&overlapped_items);
  t.machine.tp_collectives = TpCollectives::exposed;
  const LayerComm exposed = t.run(&exposed_items);
  auto count = [](const std::vector<CostItem>& items, const std::string& prefix) {
    int n = 0;
    for (const CostItem& item : items) n += item.name.rfind(prefix, 0) == 0;
    return n;
  };
  EXPECT_GT(count(overlapped_items, "all_gather input again for dW"), 0);
  EXPECT_EQ(count(exposed_items, "all_gather input again for dW"), 0);
  EXPECT_EQ(count(exposed_items, "reduce_scatter dX"), count(overlapped_items, "reduce_scatter dX"));
  for (const CostItem& item : exposed_items) {
    if (item.group == GridDim::y) {
      EXPECT_DOUBLE_EQ(item.exposed, item.seconds) << item.name;
    }
  }
  EXPECT_DOUBLE_EQ(exposed.forward, overlapped.forward);
}

// Without tensor parallelism (y = 1) there is nothing to expose.
TEST(CostTpComm, ExposedTpCollectivesChangeNothingWithoutTp) {
  Case t;
  t.config.z = 4, t.config.microbatch = 4, t.config.data = 2;
  const LayerComm overlapped = t.run();
  t.machine.tp_collectives = TpCollectives::exposed;
  const LayerComm exposed = t.run();
  EXPECT_DOUBLE_EQ(exposed.forward, overlapped.forward);
  EXPECT_DOUBLE_EQ(exposed.backward, overlapped.backward);
}

}  // namespace
}  // namespace axo
