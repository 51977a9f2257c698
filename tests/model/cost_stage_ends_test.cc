// The embedding, LM head and loss (model/cost_stage_ends.h).
#include "model/cost_stage_ends.h"

#include <gtest/gtest.h>

#include "model/gemm_model.h"
#include "model/presets.h"

namespace axo {
namespace {

const CostItem* find(const std::vector<CostItem>& items, const std::string& prefix) {
  for (const CostItem& item : items) {
    if (item.name.rfind(prefix, 0) == 0) return &item;
  }
  return nullptr;
}

TEST(CostStageEnds, TheHeadComputesTheYRanksVocabularySlice) {
  const TransformerSpec spec = load_model("gpt3-13b");
  const MachineProfile machine = load_machine("selene");
  ParallelConfig c;
  c.x = 2, c.y = 4, c.microbatch = 1;
  const LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, shapes};
  std::vector<CostItem> items;
  const StageEndCompute ends = stage_end_compute(in, CostRecorder(&items, 1, 1));
  const double T = 2048, rows = 50688.0 / 4, k = 5120.0 / 2;
  const CostItem* head = find(items, "lm head [");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->name, "lm head [2048x12672x2560]");
  EXPECT_EQ(head->scope, CostScope::last_stage);
  EXPECT_DOUBLE_EQ(head->seconds, gemm_seconds(machine, Precision::bf16, T, rows, k));
  const CostItem* loss = find(items, "cross-entropy");
  ASSERT_NE(loss, nullptr);
  EXPECT_DOUBLE_EQ(loss->bytes, T * rows * (2 + 4 + 4));
  const CostItem* lookup = find(items, "embedding lookup");
  ASSERT_NE(lookup, nullptr);
  EXPECT_DOUBLE_EQ(lookup->bytes, 2 * T * k * 2);
  EXPECT_DOUBLE_EQ(ends.first(), memory_op_seconds(machine, 2 * T * k * 2, 1) + memory_op_seconds(machine, 4 * T * k * 2, 1));
  EXPECT_GT(ends.last(), ends.first());
}

TEST(CostStageEnds, TheLossSumsTwoFp32NumbersPerTokenOverY) {
  const TransformerSpec spec = load_model("gpt3-13b");
  const MachineProfile machine = load_machine("selene");
  ParallelConfig c;
  c.x = 2, c.y = 4, c.z = 2, c.microbatch = 2;
  const LocalShapes shapes = local_shapes(spec, c);
  std::vector<CostItem> items;
  const StageEndComm comm = stage_end_comm({spec, machine, c, shapes}, CostRecorder(&items, 1, 1));
  const CostItem* loss = find(items, "all_reduce loss max and sum");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->group, GridDim::y);
  EXPECT_DOUBLE_EQ(loss->bytes, 2048 * 2 * 4.0);  // T = b·s/z tokens
  double first = 0, last = 0;
  for (const CostItem& item : items) {
    EXPECT_EQ(item.exposed, item.seconds);  // nothing overlaps
    (item.scope == CostScope::first_stage ? first : last) += item.seconds;
  }
  EXPECT_NEAR(comm.first, first, 1e-15);
  EXPECT_NEAR(comm.last(), last, 1e-15);
}

// Under sequence parallelism the lookup's partial sums are reduce-scattered along the sequence where
// no learned positions follow (Megatron-Core's reduce_scatter_embeddings), else all-reduced, and the
// gradient all-gathered in backward; a tied head on the embedding's stage is one FSDP unit with it,
// its weights gathered over z once, an untied one its own.
TEST(CostStageEnds, SequenceParallelLookupsAndTiedHeadsUnderFsdp) {
  const TransformerSpec spec = load_model("gpt3-13b");  // tied
  const MachineProfile machine = load_machine("selene");
  ParallelConfig c;
  c.y = 4, c.z = 2, c.microbatch = 2;
  const auto items_of = [&](const TransformerSpec& s, const ParallelConfig& config) {
    std::vector<CostItem> items;
    stage_end_comm({s, machine, config, local_shapes(s, config)}, CostRecorder(&items, 1, 1));
    return items;
  };
  auto items = items_of(spec, c);
  EXPECT_NE(find(items, "all_reduce embedding output"), nullptr);
  EXPECT_NE(find(items, "all_gather embedding weights"), nullptr);
  EXPECT_EQ(find(items, "all_gather lm head weights"), nullptr);
  EXPECT_EQ(find(items, "all_gather embedding output gradient"), nullptr);
  c.sequence_parallel = true;
  items = items_of(spec, c);  // learned positions are added after the sum: all-reduced, then split
  EXPECT_NE(find(items, "all_reduce embedding output"), nullptr);
  EXPECT_NE(find(items, "all_gather embedding output gradient"), nullptr);
  TransformerSpec rotary = spec;
  rotary.positions = PositionKind::rope;
  items = items_of(rotary, c);
  EXPECT_NE(find(items, "reduce_scatter embedding output"), nullptr);
  EXPECT_EQ(find(items, "all_reduce embedding output"), nullptr);
  EXPECT_NE(find(items, "all_gather embedding output gradient"), nullptr);
  TransformerSpec untied = spec;
  untied.tied_embeddings = false;
  EXPECT_NE(find(items_of(untied, c), "all_gather lm head weights"), nullptr);
  c.pipeline = 2;  // the head's stage is another: it gathers its own copy
  EXPECT_NE(find(items_of(spec, c), "all_gather lm head weights"), nullptr);
}

// axo's executor keeps the embedding and the head whole over Z (shard_layout.h): it gathers neither
// and reduce-scatters no head gradient over Z; the data-parallel step sums them (cost_data_parallel.h).
TEST(CostStageEnds, AxosExecutorKeepsTheEmbeddingAndHeadWholeOverZ) {
  const TransformerSpec spec = load_model("gpt2-124m");
  MachineProfile machine = load_machine("selene");
  ParallelConfig c;
  c.y = 2, c.z = 2, c.pipeline = 2, c.microbatch = 2;
  const auto items_of = [&](const MachineProfile& m) {
    std::vector<CostItem> items;
    stage_end_comm({spec, m, c, local_shapes(spec, c)}, CostRecorder(&items, 1, 1));
    return items;
  };
  auto items = items_of(machine);
  EXPECT_NE(find(items, "all_gather embedding weights"), nullptr);
  EXPECT_NE(find(items, "all_gather lm head weights"), nullptr);
  EXPECT_NE(find(items, "reduce_scatter lm head dW"), nullptr);
  machine.activations = ActivationLayout::axo;
  items = items_of(machine);
  EXPECT_EQ(find(items, "all_gather embedding weights"), nullptr);
  EXPECT_EQ(find(items, "all_gather lm head weights"), nullptr);
  EXPECT_EQ(find(items, "reduce_scatter lm head dW"), nullptr);
  EXPECT_NE(find(items, "all_reduce embedding output"), nullptr);  // the tensor-parallel sums stay
  EXPECT_NE(find(items, "all_reduce lm head dX"), nullptr);
}

}  // namespace
}  // namespace axo
