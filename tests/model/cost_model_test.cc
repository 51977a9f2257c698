// The 4D cost model: message sizes, bubble, divisibility and invariants.
#include "model/cost_collective.h"
#include "model/cost_model.h"

#include <gtest/gtest.h>

#include <thread>

#include "model/config_fields.h"
#include "model/cost_fp8.h"
#include "model/memory_model.h"
#include "model/presets.h"

namespace axo {
namespace {

const CostItem* find_item(const std::vector<CostItem>& items, const std::string& name,
                          CostPhase phase = CostPhase::forward) {
  for (const CostItem& item : items) {
    if (item.name == name && item.phase == phase) return &item;
  }
  return nullptr;
}

TEST(CostModel, FourDMessageSizesFollowTheTable) {
  const TransformerSpec spec = load_model("gpt3-13b");  // h 5120, 40 heads, bf16
  const CostModel model(spec, load_machine("selene"));
  ParallelConfig c;
  c.x = 2, c.y = 4, c.z = 2, c.data = 2, c.microbatch = 2;
  ASSERT_EQ(model.check(c), "");
  std::vector<CostItem> items;
  model.explain(c, items);
  const double e = 2, h = 5120, m = 2 * 2048;  // tokens per replica per microbatch
  const double k = h, n = 3 * h;              // QKV: plain layer
  // Forward: all-gather W over Z of kn/(GxGy); all-reduce over X of mn/(GzGy).
  const CostItem* gather = find_item(items, "all_gather weights (qkv)");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->group, GridDim::z);
  EXPECT_DOUBLE_EQ(gather->bytes, k * n / (2 * 4) * e);
  const CostItem* partial = find_item(items, "all_reduce partial sums (qkv)");
  ASSERT_NE(partial, nullptr);
  EXPECT_EQ(partial->group, GridDim::x);
  EXPECT_DOUBLE_EQ(partial->bytes, m * n / (2 * 4) * e);
  // Backward: all-reduce dX over Y of mk/(GzGx); reduce-scatter dW over Z.
  const CostItem* dx = find_item(items, "all_reduce dX (qkv)", CostPhase::backward);
  ASSERT_NE(dx, nullptr);
  EXPECT_EQ(dx->group, GridDim::y);
  EXPECT_DOUBLE_EQ(dx->bytes, m * k / (2 * 2) * e);
  const CostItem* dw = find_item(items, "reduce_scatter dW (qkv)", CostPhase::backward);
  ASSERT_NE(dw, nullptr);
  EXPECT_DOUBLE_EQ(dw->bytes, k * n / (2 * 4) * e);
  // The transposed attention-out layer swaps X and Y: its partial sums go over Y.
  const CostItem* out = find_item(items, "all_reduce partial sums (attn_out)");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->group, GridDim::y);
  EXPECT_DOUBLE_EQ(out->bytes, m * h / (2 * 2) * e);
}

// A faster device never slows a fixed plan: with context parallelism and ZeRO-2 the ring's hops
// and the earlier microbatches' reduce-scatters both hid under the attention, and a higher peak
// exposed both by what it saved once (gpt3-13b on 12 Summit GPUs: 983 s to 990 s).
TEST(CostModel, AFasterDeviceNeverSlowsAFixedPlan) {
  TransformerSpec spec = load_model("gpt3-13b");
  spec.precision = Precision::fp16;
  const ParallelConfig c = parse_fix("pipeline=3,data=1,context=2,x=2,y=1,z=1,microbatch=1,recompute=full,"
                                     "recompute_layers=0,offload=on,zero=2,overlap=off,sequence_parallel=off,"
                                     "interleave=1,order=xyzcdp").values;
  MachineProfile summit = load_machine("summit");
  double previous = 1e300;
  for (double scale : {1.0, 1.1, 1.3, 2.0}) {
    MachineProfile faster = summit;
    faster.peak_tflops_fp16 *= scale, faster.peak_tflops_fp32 *= scale, faster.hbm_bandwidth_GBps *= scale;
    const double t = CostModel(spec, faster).evaluate(c).iter_time;
    EXPECT_LE(t, previous * (1 + 1e-12)) << scale;
    previous = t;
  }
}

// The comm memo is keyed by what placement reads: two orders alike in every capped stride but
// not in whether x and y are adjacent (fp8's amax over x × y) price as a fresh model prices them.
// Issue: the data-parallel reduction of the fullest stage's gradients hid under the slowest stage's
// backward; with uneven stages (6,6,6,5,5,4 and the head) no recompute paced on the head's stage,
// whose shorter backward hid less of the first stage's reduce-scatter than selective recompute's
// 6-layer stage did: 24.80 s against 23.40 s. The window is the fullest stage's own: recomputing
// less is never slower.
TEST(CostModel, LessRecomputeIsNeverSlowerWithUnevenStages) {
  const CostModel model(load_model("llama3-8b"), load_machine("dgx-h100"));
  ParallelConfig c;
  c.pipeline = 6, c.data = 2, c.context = 2, c.microbatch = 1, c.zero = 2;
  c.order = parse_order("xyzpcd", "test");
  double previous = 0;
  for (Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full}) {
    c.recompute = recompute;
    ASSERT_EQ(model.check(c), "");
    const double seconds = model.evaluate(c).iter_time;
    EXPECT_GT(seconds, previous) << int(recompute);
    previous = seconds;
  }
}

TEST(CostModel, TheCommMemoTellsAdjacentXAndYApart) {
  TransformerSpec spec = load_model("gpt3-175b");  // 96 heads: y = 3 splits them
  spec.precision = Precision::fp8;
  const MachineProfile machine = load_machine("dgx-h100");
  ParallelConfig a;
  a.x = 2, a.y = 3, a.data = 4, a.pipeline = 2, a.microbatch = 1;
  a.order = parse_order("zdyxcp", "test");
  ParallelConfig b = a;
  b.order = parse_order("zdypcx", "test");
  const CostModel shared(spec, machine);
  shared.evaluate(a);
  EXPECT_DOUBLE_EQ(shared.evaluate(b).tp_comm, CostModel(spec, machine).evaluate(b).tp_comm);
}

// No row is exposed for longer than it takes: with context parallelism, long sequences and a
// partial recompute, the ring's attention exceeded the paced layer's recompute and ZeRO-2's window
// went negative (a 111 ms reduce-scatter exposed for 525 ms).
TEST(CostModel, NoItemIsExposedLongerThanItTakes) {
  TransformerSpec spec = load_model("llama3-8b");
  spec.seq_len = 131072;
  const CostModel model(spec, load_machine("dgx-h100"));
  for (int64_t recompute_layers : {0, 1, 4}) {
    ParallelConfig c;
    c.context = 8, c.data = 8, c.zero = 2, c.recompute = Recompute::full, c.recompute_layers = recompute_layers;
    ASSERT_EQ(model.check(c), "");
    std::vector<CostItem> items;
    model.explain(c, items);
    for (const CostItem& item : items) {
      EXPECT_LE(item.exposed, item.seconds * (1 + 1e-12)) << item.name << ", recompute_layers " << recompute_layers;
    }
  }
}

TEST(CostModel, BubbleIsPMinusOneOverVOfTheSteadyState) {
  const CostModel model(load_model("gpt3-175b"), load_machine("selene"));
  ParallelConfig c;
  c.pipeline = 8, c.y = 8, c.data = 2, c.microbatch = 1, c.recompute = Recompute::selective;
  for (int64_t v : {1, 2, 3}) {
    c.interleave = v;
    ASSERT_EQ(model.check(c), "");
    const Breakdown b = model.evaluate(c);
    const double m = double(model.microbatches(c));
    EXPECT_NEAR(b.bubble / ((b.compute + b.tp_comm) / m), 7.0 / double(v), 1e-9);
    EXPECT_NEAR(b.iter_time, b.compute + b.tp_comm + b.bubble + b.pp_comm + b.dp_comm + b.offload + b.optimizer, 1e-12);
  }
}

TEST(CostModel, CheckSaysWhatDoesNotDivide) {
  const CostModel model(load_model("gpt3-175b"), load_machine("selene"));
  ParallelConfig c;
  c.y = 7;
  EXPECT_EQ(model.check(c), "y=7 does not divide heads=96");
  c = ParallelConfig{};
  c.pipeline = 5;  // 96 layers over 5 stages: unequal, and fine
  EXPECT_EQ(model.check(c), "");
  c.pipeline = 8, c.interleave = 13;
  EXPECT_EQ(model.check(c), "pipeline=8 × interleave=13 chunks for layers=96: each chunk needs at least one layer");
  c.pipeline = 1, c.interleave = 2;
  EXPECT_EQ(model.check(c), "interleave=2 needs pipeline>1");
  c.pipeline = 8, c.data = 4, c.microbatch = 8;  // 1536 / 32 = 48 microbatches: 8 divides; 5 does not
  c.pipeline = 5;
  EXPECT_EQ(model.check(c), "pipeline=5 does not divide the 48 microbatches (global_batch=1536 / (data=4 * "
                            "microbatch=8)) of the interleaved schedule");
  c = ParallelConfig{};
  c.z = 2;
  EXPECT_EQ(model.check(c), "z=2 does not divide microbatch=1");
  c = ParallelConfig{};
  c.x = 2, c.sequence_parallel = true;
  EXPECT_NE(model.check(c).find("sequence parallelism needs"), std::string::npos);
  EXPECT_NE(model.check(c).find("not x=2, y=1"), std::string::npos);
  // With z > 1 (torchtitan's FSDP beside sequence-parallel TP): each Z rank's rows split over Y.
  c = ParallelConfig{};
  c.y = 8, c.z = 2, c.microbatch = 2, c.sequence_parallel = true;
  EXPECT_EQ(model.check(c), "");
  c.y = 1;
  EXPECT_EQ(model.check(c), "sequence parallelism needs x=1 and y>1 (tensor parallelism over Y alone, with any z), "
                            "not y=1");  // x=1 breaks nothing
}

// Without context parallelism any sequence length goes; with it, 2·context must divide it.
TEST(CostModel, OnlyContextParallelismNeedsAnEvenSequence) {
  TransformerSpec spec = load_model("gpt2-124m");
  spec.seq_len = 1023;
  const CostModel model(spec, load_machine("dgx-h100"));
  ParallelConfig c;
  c.y = 4;
  EXPECT_EQ(model.check(c), "");
  c.y = 1, c.context = 2;
  EXPECT_EQ(model.check(c), "context=2: 2*context=4 does not divide seq_len=1023 (each sequence splits into "
                            "2*context equal chunks for causal load balance)");
}

// Sequence parallelism splits each sequence (each context rank's share of it) over Y.
TEST(CostModel, SequenceParallelismSplitsTheSequenceOverY) {
  TransformerSpec spec = load_model("llama3-8b");
  spec.seq_len = 1020;
  const CostModel model(spec, load_machine("dgx-h100"));
  ParallelConfig c;
  c.y = 8, c.sequence_parallel = true;
  EXPECT_EQ(model.check(c), "sequence_parallel=on: y=8 does not divide the 1020 tokens of each sequence "
                            "(Megatron-LM and torchtitan split the sequence itself over Y)");
  c.y = 4;
  EXPECT_EQ(model.check(c), "");
  c.sequence_parallel = false, c.y = 8;
  EXPECT_EQ(model.check(c), "");
  c.sequence_parallel = true, c.y = 2, c.context = 2;  // 4 equal chunks of 255; 510 tokens per context rank
  EXPECT_EQ(model.check(c), "");
  // Held by --fix, the rule is named before the search.
  EXPECT_NE(model.check_held(parse_fix("y=8,sequence_parallel=on")).find("y=8 does not divide the 1020 tokens"),
            std::string::npos);
  EXPECT_EQ(model.check_held(parse_fix("y=4,sequence_parallel=on")), "");
  c.y = 4;
  EXPECT_EQ(model.check(c), "sequence_parallel=on: y=4 does not divide the 510 tokens of each sequence on a "
                            "context rank (seq_len / context) (Megatron-LM and torchtitan split the sequence "
                            "itself over Y)");
}

// Full recompute of the first N layers of each chunk: N at most the largest chunk's layers.
TEST(CostModel, RecomputeLayersAtMostAChunksLayers) {
  const CostModel model(load_model("llama3-70b"), load_machine("dgx-h100"));  // 80 layers
  ParallelConfig c;
  c.pipeline = 2, c.interleave = 10, c.data = 4, c.y = 8, c.recompute = Recompute::full, c.recompute_layers = 5;
  EXPECT_EQ(model.check(c), "");  // chunks of 4 and 5 (the head's fewer): every layer
  c.recompute_layers = 7;
  EXPECT_EQ(model.check(c), "recompute_layers=7 is more than the 5 layers of the largest of the pipeline=2 × "
                            "interleave=10 chunks (it counts the layers of each chunk)");
  c.pipeline = 1, c.interleave = 1, c.recompute_layers = 100;
  EXPECT_EQ(model.check(c), "recompute_layers=100 is more than the 80 layers of the model");
}

// The held values of a --fix the search finds nothing for: the rule they break, in their values.
TEST(CostModel, CheckHeldNamesTheRuleAndTheUsersValues) {
  const CostModel model(load_model("llama3-70b"), load_machine("dgx-h100"));  // 80 layers, 64 heads, batch 512
  const auto held = [&](const char* fix) { return model.check_held(parse_fix(fix)); };
  EXPECT_EQ(held("interleave=3,pipeline=1"), "interleave=3 needs pipeline>1");
  EXPECT_EQ(held("interleave=80,pipeline=2"),
            "pipeline=2 × interleave=80 chunks for layers=80: each chunk needs at least one layer");
  EXPECT_EQ(held("pipeline=32,interleave=3"),
            "pipeline=32 × interleave=3 chunks for layers=80: each chunk needs at least one layer");
  EXPECT_EQ(held("interleave=41"), "interleave=41 needs pipeline>1 and a layer per chunk: at least 2 × 41 = 82 "
                                   "chunks for layers=80");
  EXPECT_EQ(held("sequence_parallel=on,y=1"),
            "sequence parallelism needs x=1 and y>1 (tensor parallelism over Y alone, with any z), not y=1");
  EXPECT_EQ(held("sp=on,x=2"),
            "sequence parallelism needs x=1 and y>1 (tensor parallelism over Y alone, with any z), not x=2");
  EXPECT_EQ(held("microbatch=1024"), "microbatch=1024 does not divide global_batch=512");
  EXPECT_EQ(held("microbatch=3"), "microbatch=3 does not divide global_batch=512");
  EXPECT_EQ(held("data=16,microbatch=64"), "data*microbatch=1024 does not divide global_batch=512");
  EXPECT_EQ(held("z=4,microbatch=2"), "z=4 does not divide microbatch=2");
  EXPECT_EQ(held("pipeline=4,interleave=2,data=8,microbatch=32"),
            "pipeline=4 does not divide the 2 microbatches (global_batch=512 / (data=8 * microbatch=32)) of the "
            "interleaved schedule");
  EXPECT_EQ(held("recompute=none,recompute_layers=2").find("recompute_layers=2 needs recompute=full"), 0u);
  EXPECT_EQ(held("recompute_layers=100"), "recompute_layers=100 is more than the 80 layers of the model");
  EXPECT_EQ(held("pipeline=2,interleave=10,recompute_layers=7").find("recompute_layers=7 is more than the 5 layers"),
            0u);
  // A whole grid held, the microbatch free: the grid's own fault, not the default microbatch's.
  EXPECT_EQ(held("pipeline=1,data=1,context=1,x=1,y=12,z=2").find("y=12 does not divide"), 0u)
      << held("pipeline=1,data=1,context=1,x=1,y=12,z=2");
  // Interleaving held with the pipeline free: the largest chunks are those of two stages.
  EXPECT_EQ(held("interleave=10,recompute_layers=6").find("recompute_layers=6 is more than the 5 layers"), 0u)
      << held("interleave=10,recompute_layers=6");
  // Values some configuration can hold: nothing to say.
  for (const char* fine : {"", "sp=on", "interleave=3", "pipeline=2,interleave=10,recompute_layers=5", "microbatch=4",
                           "recompute_layers=2", "pipeline=8,data=8,context=1,x=1,y=1,z=1"}) {
    EXPECT_EQ(held(fine), "") << fine;
  }
}

// The settings the search tries only where they change something: zero where data·context > 1,
// overlap off where x·y·z > 1. Held where the held grid (or the GPUs it leaves) makes that
// product 1, the rule is named; where it is free, nothing is said.
TEST(CostModel, CheckHeldNamesTheSettingsThatCannotMatter) {
  const CostModel model(load_model("llama3-8b"), load_machine("dgx-h100"));
  const auto held = [&](const char* fix, int64_t gpus) { return model.check_held(parse_fix(fix), gpus); };
  const std::string zero = "zero=1 shards over data × context, which is 1 here: hold data*context > 1 or zero=0";
  EXPECT_EQ(held("pipeline=16,zero=1", 16), zero);                  // the GPUs leave data = context = 1
  EXPECT_EQ(held("data=1,context=1,zero=2", 16).find("zero=2 shards"), 0u);  // held outright
  EXPECT_EQ(held("pipeline=2,x=1,y=8,z=1,zero=1", 16), zero);       // the rest of the grid held
  EXPECT_EQ(held("data=16,overlap=off", 16),
            "overlap=off has nothing to hold back without tensor parallelism (x*y*z = 1 here): only x*y*z > 1 "
            "searches it");
  for (const char* fine : {"pipeline=2,zero=1", "data=2,overlap=off", "zero=1", "overlap=off", "x=1,y=1,z=1,zero=1"}) {
    EXPECT_EQ(held(fine, 16), "") << fine;
  }
  EXPECT_EQ(held("pipeline=16,zero=1", 0), "");  // without the GPU count nothing is forced
}

// The interleaved schedule's rule with data or microbatch free: every microbatch count they allow
// divides global_batch / (the held ones), so a held pipeline must divide that, and a free one needs
// it above 1.
TEST(CostModel, CheckHeldNamesTheInterleavedRuleOverEveryMicrobatchCount) {
  const CostModel model(load_model("llama3-8b"), load_machine("dgx-h100"));  // global_batch 512
  const auto held = [&](const char* fix) { return model.check_held(parse_fix(fix)); };
  EXPECT_EQ(held("pipeline=3,interleave=2"),
            "the interleaved schedule needs the pipeline to divide its microbatches, global_batch / (data * "
            "microbatch): with global_batch=512 there are at most 512, and pipeline=3 divides no count of them");
  EXPECT_NE(held("interleave=2,data=8,microbatch=64").find("there are at most 1, which no pipeline > 1 divides"),
            std::string::npos) << held("interleave=2,data=8,microbatch=64");
  EXPECT_NE(held("pipeline=4,interleave=2,data=256").find("at most 2, and pipeline=4 divides no count"),
            std::string::npos) << held("pipeline=4,interleave=2,data=256");
  for (const char* fine : {"pipeline=4,interleave=2", "interleave=2,data=8", "pipeline=2,interleave=2,microbatch=256"}) {
    EXPECT_EQ(held(fine), "") << fine;
  }
}

// Sequence parallelism with z > 1 prices the rows each Z rank holds: a Z rank
// of z = 2 with a microbatch of 2 holds one sequence, so its layer costs and
// activations are those of z = 1 with a microbatch of 1; only the Z weight
// traffic and the model state differ. Without sequence parallelism it holds
// more activation memory and more tensor-parallel time.
TEST(CostModel, SequenceParallelWithZPricesEachZRanksRows) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  ParallelConfig one;
  one.y = 8, one.data = 4, one.microbatch = 1, one.sequence_parallel = true, one.recompute = Recompute::selective;
  one.overlap = false;  // every collective counted: Z's traffic cannot hide
  ParallelConfig two = one;
  two.z = 2, two.data = 2, two.microbatch = 2;
  ASSERT_EQ(model.check(two), "");
  const Breakdown b1 = model.evaluate(one), b2 = model.evaluate(two);
  EXPECT_DOUBLE_EQ(b2.memory.activations, b1.memory.activations);
  EXPECT_NEAR(b2.compute, b1.compute, 1e-9 * b1.compute);
  EXPECT_GT(b2.tp_comm, b1.tp_comm);  // the Z weight all-gathers and reduce-scatters besides Y's
  ParallelConfig without = two;
  without.sequence_parallel = false;
  EXPECT_GT(model.evaluate(without).memory.activations, b2.memory.activations);
}

TEST(CostModel, UnequalStagesArePricedByTheSlowest) {
  TransformerSpec spec = load_model("gpt3-175b");
  spec.layers = 70;  // BLOOM-176B's 70 layers over 12 stages
  const CostModel model(spec, load_machine("selene"));
  ParallelConfig c;
  c.pipeline = 12, c.y = 8, c.data = 2, c.microbatch = 1, c.recompute = Recompute::selective;
  ASSERT_EQ(model.check(c), "");
  const PipelineSplit& split = model.pipeline_split(c);
  EXPECT_EQ(split.max_stage_layers(), 6);
  EXPECT_EQ(split.stage_layers(11), 5);  // the head's stage takes fewer
  std::vector<CostItem> items;
  const Breakdown b = model.explain(c, items);
  const double m = double(model.microbatches(c));
  for (const CostItem& item : items) {
    if (item.scope == CostScope::layer) {
      EXPECT_EQ(item.per_iteration, 6 * m) << item.name;  // a 6-layer stage
    }
  }
  // The slowest stage runs 6 layers, not the 70/12 average: at least the bound's m · 6 layers.
  EXPECT_GE(b.compute, model.compute_lower_bound(c));
  // 60 layers (5 per stage, the head's stage the slowest at 5 + 1/3 layer-equivalents) run faster.
  spec.layers = 60;
  EXPECT_LT(CostModel(spec, load_machine("selene")).evaluate(c).compute, b.compute);
  EXPECT_NEAR(b.bubble, 11 * (b.compute + b.tp_comm) / m, 1e-9 * b.bubble);
}

TEST(CostModel, MoreGpusNeverGrowComputePerGpu) {
  const CostModel model(load_model("llama2-13b"), load_machine("dgx-h100"));
  for (GridDim dim : {GridDim::data, GridDim::x, GridDim::y, GridDim::z, GridDim::pipeline}) {
    ParallelConfig c;
    c.microbatch = 8;
    c.recompute = Recompute::selective;
    for (int step = 0; step < 3; ++step) {
      ParallelConfig bigger = c;
      if (dim == GridDim::data) bigger.data *= 2;
      if (dim == GridDim::x) bigger.x *= 2;
      if (dim == GridDim::y) bigger.y *= 2;
      if (dim == GridDim::z) bigger.z *= 2;
      if (dim == GridDim::pipeline) bigger.pipeline *= 2;
      ASSERT_EQ(model.check(bigger), "") << order_letter(dim);
      EXPECT_LE(model.evaluate(bigger).compute, model.evaluate(c).compute * (1 + 1e-12))
          << order_letter(dim) << " step " << step;
      c = bigger;
    }
  }
}

TEST(CostModel, OverlapNeverSlowsAndHidesCollectives) {
  const CostModel model(load_model("gpt3-13b"), load_machine("perlmutter"));
  ParallelConfig c;
  c.x = 2, c.y = 2, c.z = 2, c.data = 4, c.microbatch = 2;
  c.overlap = false;
  const Breakdown off = model.evaluate(c);
  c.overlap = true;
  const Breakdown on = model.evaluate(c);
  EXPECT_LT(on.tp_comm, off.tp_comm);
  EXPECT_DOUBLE_EQ(on.compute, off.compute);
}

TEST(CostModel, OverlapEfficiencyScalesWhatHides) {
  MachineProfile machine = load_machine("perlmutter");
  ParallelConfig c;
  c.x = 2, c.y = 2, c.z = 2, c.data = 4, c.microbatch = 2;
  c.overlap = false;
  const Breakdown off = CostModel(load_model("gpt3-13b"), machine).evaluate(c);
  c.overlap = true;
  const Breakdown full = CostModel(load_model("gpt3-13b"), machine).evaluate(c);
  machine.overlap_efficiency = 0.5;
  const Breakdown half = CostModel(load_model("gpt3-13b"), machine).evaluate(c);
  machine.overlap_efficiency = 0;
  const Breakdown none = CostModel(load_model("gpt3-13b"), machine).evaluate(c);
  // Nothing hides at 0: overlap on costs what overlap off does; half of it at 0.5.
  EXPECT_NEAR(none.tp_comm, off.tp_comm, 1e-12 * off.tp_comm);
  EXPECT_NEAR(half.tp_comm, (full.tp_comm + none.tp_comm) / 2, 1e-9 * off.tp_comm);
  EXPECT_LT(full.tp_comm, half.tp_comm);
  EXPECT_GT(none.dp_comm, full.dp_comm);
}

TEST(CostModel, CollectiveSlowdownMultipliesCommunication) {
  MachineProfile machine = load_machine("selene");
  machine.overlap_efficiency = 0;  // so every collective second is exposed
  ParallelConfig c;
  c.x = 2, c.y = 2, c.data = 4, c.pipeline = 2, c.microbatch = 1;
  const Breakdown base = CostModel(load_model("gpt3-13b"), machine).evaluate(c);
  machine.collective_slowdown = 3;
  const Breakdown slow = CostModel(load_model("gpt3-13b"), machine).evaluate(c);
  EXPECT_NEAR(slow.tp_comm, 3 * base.tp_comm, 1e-9 * base.tp_comm);
  EXPECT_NEAR(slow.dp_comm, 3 * base.dp_comm, 1e-9 * base.dp_comm);
  EXPECT_DOUBLE_EQ(slow.compute, base.compute);
}

TEST(CostModel, OffloadTradesMemoryForHostTime) {
  TransformerSpec spec = load_model("gpt3-6.7b");
  spec.precision = Precision::fp16;  // V100 has no bf16
  const CostModel model(spec, load_machine("summit"));
  ParallelConfig c;
  c.y = 2, c.pipeline = 2, c.data = 2, c.microbatch = 1;
  ASSERT_EQ(model.check(c), "") << model.check(c);
  const Breakdown plain = model.evaluate(c);
  c.offload = true;
  const Breakdown offloaded = model.evaluate(c);
  EXPECT_LT(offloaded.memory.total(), plain.memory.total());
  EXPECT_GT(offloaded.offload, 0);
  EXPECT_EQ(plain.offload, 0);
}

// The rank-order bound never exceeds what it bounds, and is tighter than the
// compute bound wherever tensor-parallel communication is exposed; a known
// memory gives the same breakdown as a computed one.
TEST(CostModel, PacedBoundIsALowerBoundOnEveryRankOrder) {
  TransformerSpec spec = load_model("llama3-8b");
  spec.precision = Precision::fp8;
  const CostModel model(spec, load_machine("dgx-h100"));
  ParallelConfig c;
  c.pipeline = 4, c.y = 4, c.context = 2, c.data = 2, c.microbatch = 1, c.interleave = 2;
  ASSERT_EQ(model.check(c), "");
  bool tighter = false;
  for (const auto& order : distinct_orders(c, 8, priced_groups(spec, load_machine("dgx-h100")))) {
    c.order = order;
    const Breakdown b = model.evaluate(c);
    const double paced = model.paced_lower_bound(c);
    EXPECT_LE(paced, b.compute + b.tp_comm + b.bubble + 1e-12) << c.order_string();
    EXPECT_LE(model.compute_lower_bound(c) * (1 + 3.0 / 2 / double(model.microbatches(c))), b.iter_time);
    tighter |= paced > model.compute_lower_bound(c) * (1 + 3.0 / 2 / double(model.microbatches(c)));
    const MemoryBreakdown memory = memory_per_device(spec, c, model.machine().attention);
    EXPECT_EQ(components(model.evaluate(c, memory)), components(b));
    EXPECT_EQ(model.evaluate(c, memory).memory.total(), b.memory.total());
  }
  EXPECT_TRUE(tighter);
}

TEST(CostModel, ExplainAgreesWithEvaluate) {
  const CostModel model(load_model("megatron-18b"), load_machine("selene"));
  ParallelConfig c;
  c.pipeline = 2, c.x = 2, c.y = 4, c.z = 2, c.data = 2, c.microbatch = 2, c.interleave = 2;
  std::vector<CostItem> items;
  const Breakdown explained = model.explain(c, items);
  const Breakdown evaluated = model.evaluate(c);
  EXPECT_DOUBLE_EQ(explained.iter_time, evaluated.iter_time);
  EXPECT_GT(items.size(), 30u);
  // Per iteration, the layer GEMMs add up to the forward+backward GEMM share of compute.
  double gemm = 0;
  for (const CostItem& item : items) {
    if (item.scope == CostScope::layer && item.kind == CostKind::gemm) gemm += item.seconds * item.per_iteration;
  }
  EXPECT_GT(gemm, 0.5 * evaluated.compute);
  EXPECT_LT(gemm, evaluated.compute);
}

// Whether a machine can price a configuration: its precision's rate first, then the configuration.
TEST(CostModel, PricingProblemNamesTheRateThenTheConfiguration) {
  MachineProfile fp32_only = load_machine("selene");
  fp32_only.peak_tflops_bf16 = 0;
  ParallelConfig c;
  c.y = 3;  // does not divide 40 heads
  EXPECT_NE(CostModel(load_model("gpt3-13b"), fp32_only).pricing_problem(c).find("has no bf16 rate"), std::string::npos);
  const CostModel selene(load_model("gpt3-13b"), load_machine("selene"));
  EXPECT_NE(selene.pricing_problem(c).find("y=3"), std::string::npos) << selene.pricing_problem(c);
  c.y = 1;
  EXPECT_EQ(selene.pricing_problem(c), "");
}

// Without a pipeline every priced second of compute has its row: the GEMM and memory-bound rows,
// exposed, add up to compute + optimizer (the loss's and the final norm's backward, and fp8's
// casts again under full recompute, had none).
TEST(CostModel, ExplainedComputeRowsAddUpToTheBreakdown) {
  TransformerSpec fp8 = load_model("llama3-8b");
  fp8.precision = Precision::fp8;
  MachineProfile h100 = load_machine("dgx-h100");
  h100.fp8_casts = Fp8Casts::separate;
  MachineProfile fsdp = load_machine("h200-hgx");  // torchao's fp8 gathers: one amax all-reduce a step
  fsdp.weight_gather = WeightGather::per_block, fsdp.fp8_weights = Fp8Weights::gathered;
  for (const MachineProfile& machine : {h100, fsdp}) {
    for (Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full}) {
      for (const TransformerSpec& spec : {load_model("llama3-8b"), fp8}) {
        ParallelConfig c;
        c.data = 2, c.y = 2, c.z = 4, c.microbatch = 8, c.recompute = recompute, c.sequence_parallel = true;
        std::vector<CostItem> items;
        const Breakdown b = CostModel(spec, machine).explain(c, items);
        double rows = 0;
        for (const CostItem& item : items) {
          if (item.kind == CostKind::gemm || item.kind == CostKind::memory) rows += item.exposed * item.per_iteration;
        }
        EXPECT_NEAR(rows, b.compute + b.optimizer, 1e-9 * b.compute)
            << machine.name << " " << to_string(recompute) << " " << to_string(spec.precision);
      }
    }
  }
}

TEST(CostModel, AConstModelIsSharedBetweenThreads) {
  // Many configurations with few local shapes, so the threads race on the memo.
  std::vector<ParallelConfig> configs;
  for (int64_t y : {1, 2, 4, 8}) {
    for (int64_t pipeline : {1, 2, 4}) {
      for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
        ParallelConfig c;
        c.y = y, c.pipeline = pipeline, c.data = 2, c.recompute = r;
        configs.push_back(c);
      }
    }
  }
  const CostModel shared(load_model("gpt3-13b"), load_machine("selene"));
  std::vector<std::vector<double>> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < configs.size(); ++i) {
          const ParallelConfig& c = configs[(i + t * 7) % configs.size()];
          const double time = shared.evaluate(c).iter_time;
          if (round == 0) seen[t].push_back(time);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const CostModel alone(load_model("gpt3-13b"), load_machine("selene"));
  for (size_t t = 0; t < seen.size(); ++t) {
    for (size_t i = 0; i < configs.size(); ++i) {
      EXPECT_EQ(seen[t][i], alone.evaluate(configs[(i + t * 7) % configs.size()]).iter_time);
    }
  }
}

// Partial recompute prices the layers it recomputes as full recompute does and the others as
// without it: half of each chunk recomputed costs half of full recompute's extra, all of it
// costs what full recompute does, and the explanation counts the recompute on those layers only.
TEST(CostModel, PartialRecomputePricesTheRecomputedLayersOnly) {
  const CostModel model(load_model("gpt3-175b"), load_machine("selene"));  // 96 layers: chunks of 6
  ParallelConfig c;
  c.pipeline = 8, c.interleave = 2, c.y = 8, c.data = 2, c.microbatch = 1, c.sequence_parallel = true;
  auto priced = [&](Recompute recompute, int64_t recompute_layers) {
    ParallelConfig with = c;
    with.recompute = recompute, with.recompute_layers = recompute_layers;
    EXPECT_EQ(model.check(with), "");
    return model.evaluate(with);
  };
  const Breakdown none = priced(Recompute::none, 0), full = priced(Recompute::full, 0);
  const Breakdown half = priced(Recompute::full, 3);
  EXPECT_DOUBLE_EQ(priced(Recompute::full, 6).iter_time, full.iter_time);
  EXPECT_NEAR(half.compute, none.compute + (full.compute - none.compute) / 2, 1e-12 * full.compute);
  EXPECT_NEAR(half.tp_comm, none.tp_comm + (full.tp_comm - none.tp_comm) / 2, 1e-12 * full.tp_comm);
  EXPECT_LT(half.iter_time, full.iter_time);
  EXPECT_GT(half.iter_time, none.iter_time);
  // Bounds stay below the price.
  c.recompute = Recompute::full, c.recompute_layers = 3;
  EXPECT_LE(model.compute_lower_bound(c), half.compute);
  EXPECT_LE(model.paced_lower_bound(c), half.compute + half.tp_comm + half.bubble);
  std::vector<CostItem> items;
  model.explain(c, items);
  const CostItem* again = find_item(items, "whole layer forward again", CostPhase::recompute);
  ASSERT_NE(again, nullptr);
  const double m = double(model.microbatches(c));
  EXPECT_DOUBLE_EQ(again->per_iteration, 6 * m);  // 3 of each of the slowest stage's 2 chunks
  c.recompute = Recompute::selective;
  EXPECT_NE(model.check(c).find("recompute_layers=3 needs recompute=full"), std::string::npos) << model.check(c);
}

// h200-hgx is the H100's die and software with more and faster HBM: no plan prices slower on it
// than on dgx-h100 (its preset had run FlashAttention-2 where dgx-h100's runs cuDNN's kernel).
TEST(CostModel, AnH200IsNeverSlowerThanAnH100OnTheSamePlan) {
  const MachineProfile h100 = load_machine("dgx-h100"), h200 = load_machine("h200-hgx");
  for (const char* model : {"llama3-8b", "llama3-70b", "gpt3-175b"}) {
    const TransformerSpec spec = load_model(model);
    for (int64_t y : {1, 8}) {
      ParallelConfig c;
      c.y = y, c.data = 8 / y * 8, c.pipeline = 8, c.microbatch = 1, c.recompute = Recompute::selective;
      c.sequence_parallel = y > 1;
      ASSERT_EQ(CostModel(spec, h100).check(c), "") << model;
      EXPECT_LE(CostModel(spec, h200).evaluate(c).iter_time, CostModel(spec, h100).evaluate(c).iter_time)
          << model << " y " << y;
    }
  }
}

}  // namespace
}  // namespace axo
