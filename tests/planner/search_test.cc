// The configuration search: completeness, ranking, --fix, pruning, errors.
#include "planner/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "model/error.h"
#include "model/presets.h"
#include "planner/export.h"
#include "planner/row_folding.h"

namespace axo {
namespace {

SearchResult run(const std::string& model_name, const std::string& machine, int64_t gpus,
                 const std::string& fix = "", size_t top = 10, bool prune = true) {
  static std::vector<std::unique_ptr<CostModel>> models;  // keep alive: rows refer to nothing, but cheap
  models.push_back(std::make_unique<CostModel>(load_model(model_name), load_machine(machine)));
  SearchOptions options;
  options.gpus = gpus;
  options.top = top;
  options.fixed = parse_fix(fix);
  options.prune = prune;
  return search(*models.back(), options);
}

// The speed-ups change no answer: the top rows (configuration and every
// number) with the rank-order bound, with only the compute bound, and with no
// pruning at all are the same, on models with and without a pipeline,
// context and fp8.
TEST(Search, TheBoundsChangeNoAnswer) {
  struct Case {
    const char* model;
    const char* machine;
    int64_t gpus;
    Precision precision;
    const char* fix = "";
  };
  for (const Case& c : {Case{"gpt3-13b", "selene", 32, Precision::bf16}, Case{"llama3-8b", "dgx-h100", 16, Precision::fp8},
                        Case{"gpt3-175b", "selene", 128, Precision::bf16},
                        Case{"gpt3-13b", "selene", 32, Precision::bf16, "recompute_layers=3"}}) {
    TransformerSpec spec = load_model(c.model);
    spec.precision = c.precision;
    const CostModel model(spec, load_machine(c.machine));
    SearchOptions options;
    options.gpus = c.gpus;
    options.fixed = parse_fix(c.fix);
    options.top = 15;
    options.fold = false;  // a row pruned at the bound's tie would only change the folded variants
    const SearchResult fast = search(model, options);
    options.paced_bound = false;
    const SearchResult compute_bound = search(model, options);
    options.prune = false;
    const SearchResult exhaustive = search(model, options);
    ASSERT_EQ(fast.best.size(), 15u) << c.model;
    EXPECT_LT(fast.evaluated, compute_bound.evaluated) << c.model;  // the rank-order bound prunes
    for (const SearchResult* other : {&compute_bound, &exhaustive}) {
      ASSERT_EQ(other->best.size(), fast.best.size()) << c.model;
      for (size_t i = 0; i < fast.best.size(); ++i) {
        EXPECT_EQ(fast.best[i].config, other->best[i].config) << c.model << " row " << i;
        EXPECT_EQ(components(fast.best[i].breakdown), components(other->best[i].breakdown)) << c.model << " row " << i;
        EXPECT_EQ(memory_parts(fast.best[i].breakdown.memory), memory_parts(other->best[i].breakdown.memory));
      }
    }
  }
}

// The setting bounds (the compute bound checked once for the settings that
// do not change it, and each setting's paced bound on its fastest placement)
// prune only what the rank-order bound would: the rows and their folded
// twins are the same as without them, the rows and the count of
// configurations as with no pruning at all, on long sequences where context
// parallelism ranks, by iteration time and by cost.
TEST(Search, TheSettingBoundsChangeNoAnswer) {
  struct Case {
    const char* model;
    const char* machine;
    int64_t gpus;
    int64_t seq_len;
    RankBy by;
  };
  for (const Case& c : {Case{"llama3-8b", "dgx-h100", 64, 65536, RankBy::iteration},
                        Case{"gpt3-13b", "selene", 128, 32768, RankBy::iteration},
                        Case{"llama3-8b", "dgx-h100", 64, 65536, RankBy::cost}}) {
    TransformerSpec spec = load_model(c.model);
    spec.seq_len = c.seq_len;
    const CostModel model(spec, load_machine(c.machine));
    SearchOptions options;
    options.gpus = c.gpus;
    options.top = 12;
    options.rank_by = c.by;
    const SearchResult fast = search(model, options);
    options.setting_bounds = false;
    const SearchResult before = search(model, options);
    options.prune = false;
    const SearchResult exhaustive = search(model, options);
    ASSERT_EQ(fast.best.size(), 12u) << c.model;
    EXPECT_TRUE(std::any_of(fast.best.begin(), fast.best.end(), [](const PlanRow& r) { return r.config.context > 1; }))
        << c.model << ": context parallelism should rank at " << c.seq_len << " tokens";
    EXPECT_LT(fast.evaluated, before.evaluated) << c.model;  // the setting bounds prune before memory
    EXPECT_EQ(fast.evaluated + fast.pruned, exhaustive.evaluated) << c.model;
    for (const SearchResult* other : {&before, &exhaustive}) {
      ASSERT_EQ(other->best.size(), fast.best.size()) << c.model;
      for (size_t i = 0; i < fast.best.size(); ++i) {
        EXPECT_EQ(fast.best[i].config, other->best[i].config) << c.model << " row " << i;
        EXPECT_EQ(components(fast.best[i].breakdown), components(other->best[i].breakdown)) << c.model << " row " << i;
        // Without pruning, ties with the bound can add folded twins (TheBoundsChangeNoAnswer).
        if (other == &before) {
          EXPECT_EQ(fast.best[i].same_numbers, other->best[i].same_numbers) << c.model << " row " << i;
        }
      }
    }
  }
}

TEST(Search, RowsAreValidRankedAndUseEveryGpu) {
  const SearchResult result = run("gpt3-6.7b", "selene", 64, "", 25);
  ASSERT_EQ(result.best.size(), 25u);
  EXPECT_GT(result.evaluated, 1000);
  const CostModel model(load_model("gpt3-6.7b"), load_machine("selene"));
  for (size_t i = 0; i < result.best.size(); ++i) {
    const PlanRow& row = result.best[i];
    EXPECT_EQ(row.config.gpus(), 64);
    EXPECT_EQ(model.check(row.config), "");
    EXPECT_TRUE(row.breakdown.fits);
    if (i > 0) {
      EXPECT_GE(row.breakdown.iter_time, result.best[i - 1].breakdown.iter_time);
    }
  }
}

// Every ranked row is priced as a fresh model prices its configuration alone (what --fix and
// --explain show): the memo the search shares keys all a layer's price reads. It once left out
// whether a pipeline parts a tied embedding from its head, and ZeRO-2's FSDP copies, so a row came
// out up to 40% cheaper in tensor-parallel time than the same configuration fixed.
// fp8 on an H100 adds its amax reductions over x × y (the comm key's adjacency of x and y).
TEST(Search, EveryRowPricesAsAFreshModelPricesIt) {
  MachineProfile copying = load_machine("perlmutter");
  copying.fsdp_copies = FsdpCopies::flat_parameter;
  TransformerSpec fp8 = load_model("gpt2-124m");
  fp8.precision = Precision::fp8;
  const std::vector<std::pair<TransformerSpec, MachineProfile>> cases = {
      {load_model("gpt2-124m"), load_machine("perlmutter")}, {load_model("gpt2-124m"), copying},
      {fp8, load_machine("dgx-h100")}};
  for (const auto& [spec, machine] : cases) {
    const CostModel shared(spec, machine);
    SearchOptions options;
    options.gpus = 8, options.top = 100000, options.fold = false;
    const SearchResult result = search(shared, options);
    ASSERT_GT(result.best.size(), 500u);
    for (const PlanRow& row : result.best) {
      const Breakdown alone = CostModel(spec, machine).evaluate(row.config);
      ASSERT_DOUBLE_EQ(row.breakdown.iter_time, alone.iter_time) << fix_string(row.config);
      ASSERT_DOUBLE_EQ(row.breakdown.compute, alone.compute) << fix_string(row.config);
      ASSERT_DOUBLE_EQ(row.breakdown.tp_comm, alone.tp_comm) << fix_string(row.config);
      ASSERT_DOUBLE_EQ(row.breakdown.dp_comm, alone.dp_comm) << fix_string(row.config);
    }
  }
}

TEST(Search, PruningDoesNotChangeTheAnswer) {
  const SearchResult pruned = run("megatron-18b", "perlmutter", 64, "", 15, true);
  const SearchResult full = run("megatron-18b", "perlmutter", 64, "", 15, false);
  EXPECT_GT(pruned.pruned, 0);
  EXPECT_EQ(full.pruned, 0);
  EXPECT_EQ(pruned.evaluated + pruned.pruned, full.evaluated);
  ASSERT_EQ(pruned.best.size(), full.best.size());
  for (size_t i = 0; i < full.best.size(); ++i) {
    EXPECT_DOUBLE_EQ(pruned.best[i].breakdown.iter_time, full.best[i].breakdown.iter_time);
  }
}

// `accept` ranks only the configurations it accepts, and the pruned search's first is the fastest
// of them an exhaustive search costs (an export's nearest plan: it had looked at the first 64 rows
// and, where none of them was expressible, said no configuration was).
TEST(Search, OnlyAcceptedConfigurationsAreRanked) {
  const CostModel model(load_model("gpt3-1.3b"), load_machine("perlmutter"));
  SearchOptions options;
  options.gpus = 32;
  options.fixed = parse_fix("recompute=none,offload=off,order=xyzcdp");
  options.top = 100000;
  options.fold = false;
  options.prune = false;
  const SearchResult every = search(model, options);
  auto odd_data = [](const ParallelConfig& c) { return c.pipeline > 1 && c.interleave == 1 && c.data == 2; };
  const auto fastest = std::find_if(every.best.begin(), every.best.end(),
                                    [&](const PlanRow& row) { return odd_data(row.config); });
  ASSERT_NE(fastest, every.best.end());
  ASSERT_GT(fastest - every.best.begin(), 64);  // beyond the rows the nearest plan used to look at
  options.top = 1;
  options.prune = true;
  options.accept = odd_data;
  const SearchResult accepted = search(model, options);
  ASSERT_EQ(accepted.best.size(), 1u);
  EXPECT_TRUE(odd_data(accepted.best[0].config));
  EXPECT_EQ(accepted.best[0].breakdown.iter_time, fastest->breakdown.iter_time);
  options.accept = [](const ParallelConfig&) { return false; };
  EXPECT_TRUE(search(model, options).best.empty());
}

TEST(Search, FixedFieldsAreHeld) {
  const SearchResult result = run("gpt3-13b", "selene", 64, "pipeline=2,y=8,recompute=full,overlap=off");
  ASSERT_FALSE(result.best.empty());
  for (const PlanRow& row : result.best) {
    EXPECT_EQ(row.config.pipeline, 2);
    EXPECT_EQ(row.config.y, 8);
    EXPECT_EQ(row.config.recompute, Recompute::full);
    EXPECT_FALSE(row.config.overlap);
  }
  const SearchResult one = run("gpt3-13b", "selene", 64,
                               "pipeline=2,data=4,x=1,y=8,z=1,microbatch=2,recompute=full,offload=off,"
                               "zero=0,overlap=on,sequence_parallel=off,interleave=1,order=xyzdp");
  ASSERT_EQ(one.best.size(), 1u);
  EXPECT_EQ(one.evaluated, 1);
}

// Holding any one field at a value a good configuration has keeps that
// value in every row, and every row passes the same matcher --fix uses.
TEST(Search, AnyFieldCanBeHeld) {
  const SearchResult free = run("gpt3-13b", "selene", 64, "", 40);
  ASSERT_EQ(free.best.size(), 40u);
  for (const ConfigField& field : config_fields()) {
    const ParallelConfig& pick = free.best.back().config;
    const std::string fix = std::string(field.name) + "=" + field.text(field.get(pick));
    const SearchResult held = run("gpt3-13b", "selene", 64, fix, 10);
    const FixedFields fixed = parse_fix(fix);
    ASSERT_FALSE(held.best.empty()) << fix;
    for (const PlanRow& row : held.best) {
      EXPECT_TRUE(fixed.allows(row.config)) << fix;
      EXPECT_EQ(field.get(row.config), field.get(pick)) << fix;
    }
    // No configuration is faster than the best free one.
    EXPECT_GE(held.best.front().breakdown.iter_time, free.best.front().breakdown.iter_time) << fix;
  }
}

// A held value the field cannot take on any grid leaves nothing to rank.
TEST(Search, HeldValuesOutsideTheCandidatesMatchNothing) {
  EXPECT_TRUE(run("gpt3-13b", "selene", 64, "x=1,y=1,z=1,overlap=off").best.empty());
  EXPECT_TRUE(run("gpt3-13b", "selene", 64, "x=2,sequence_parallel=on").best.empty());
  EXPECT_TRUE(run("gpt3-13b", "selene", 64, "microbatch=3").best.empty());
  // Any rank order may be held, even one the search would fold into another.
  const SearchResult pinned = run("gpt3-13b", "selene", 64, "order=pdczyx");
  ASSERT_FALSE(pinned.best.empty());
  for (const PlanRow& row : pinned.best) EXPECT_EQ(row.config.order_string(), "pdczyx");
}

// The search leaves recompute_layers at 0 (every layer) and takes a held count as given: every
// row then recomputes that many layers per chunk in full, and holding another recompute with it
// matches nothing.
TEST(Search, HeldRecomputeLayersMeanFullRecomputeOfThem) {
  for (const PlanRow& row : run("gpt3-13b", "selene", 64).best) EXPECT_EQ(row.config.recompute_layers, 0);
  const SearchResult partial = run("gpt3-13b", "selene", 64, "recompute_layers=2");
  ASSERT_FALSE(partial.best.empty());
  for (const PlanRow& row : partial.best) {
    EXPECT_EQ(row.config.recompute, Recompute::full);
    EXPECT_EQ(row.config.recompute_layers, 2);
  }
  EXPECT_TRUE(run("gpt3-13b", "selene", 64, "recompute=selective,recompute_layers=2").best.empty());
}

TEST(Search, NoValidFactorizationSaysWhy) {
  try {
    run("gpt2-124m", "selene", 13);  // 13 divides no dimension of GPT-2 124M and exceeds its 12 layers
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("13 GPUs: no split"), std::string::npos) << message;
    EXPECT_NE(message.find("data*microbatch=13 does not divide global_batch=512"), std::string::npos) << message;
  }
}

TEST(Search, ContextTwoPlans) {
  const SearchResult result = run("llama3-8b", "dgx-h100", 64, "context=2", 10);
  ASSERT_FALSE(result.best.empty());
  const CostModel model(load_model("llama3-8b"), load_machine("dgx-h100"));
  for (const PlanRow& row : result.best) {
    EXPECT_EQ(row.config.context, 2);
    EXPECT_EQ(row.config.gpus(), 64);
    EXPECT_EQ(model.check(row.config), "");
  }
  // The free search considers context sizes too.
  const SearchResult free = run("llama3-8b", "dgx-h100", 64, "", 10, false);
  const SearchResult one = run("llama3-8b", "dgx-h100", 64, "context=1", 10, false);
  EXPECT_GT(free.evaluated, one.evaluated);
}

TEST(Search, AContextThatDoesNotSplitTheSequenceNamesTheValues) {
  try {
    run("gpt3-13b", "selene", 96, "context=3");  // 2*3 does not divide 2048
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("context=3: 2*context=6 does not divide seq_len=2048"), std::string::npos) << message;
  }
}

TEST(Search, NothingFitsGivesTheClosest) {
  const SearchResult result = run("llama3-405b", "perlmutter", 6);
  EXPECT_TRUE(result.best.empty());
  ASSERT_TRUE(result.closest.has_value());
  EXPECT_FALSE(result.closest->breakdown.fits);
  EXPECT_GT(result.closest->breakdown.memory.total(), result.closest->breakdown.memory_capacity);
}

// Where nothing fits, a grid whose model states alone (model_state_floor_bytes) miss by more than
// the closest configuration so far is counted out whole: the closest is the exhaustive search's.
TEST(Search, NothingFitsPrunesGridsByTheirModelStatesWithoutChangingTheClosest) {
  const SearchResult pruned = run("llama3-405b", "selene", 16, "", 10, true);
  const SearchResult every = run("llama3-405b", "selene", 16, "", 10, false);
  ASSERT_TRUE(pruned.best.empty() && every.best.empty());
  ASSERT_TRUE(pruned.closest && every.closest);
  EXPECT_GT(pruned.pruned, every.evaluated / 2);
  EXPECT_EQ(pruned.evaluated + pruned.pruned, every.evaluated);
  EXPECT_EQ(fix_string(pruned.closest->config), fix_string(every.closest->config));
  EXPECT_EQ(pruned.closest->breakdown.memory.total(), every.closest->breakdown.memory.total());
}

// Folding rows with equal numbers: the unfolded ranking with the twins taken
// out, in the same order, each twin named by the row that shows it. On CPU
// ranks (overlap efficiency 0, as calibrate measures MPI) overlap on and off
// cost the same wherever z = 1 (no weight buffers to double).
TEST(Search, FoldingKeepsTheRanking) {
  MachineProfile cpu_like = load_machine("selene");
  cpu_like.overlap_efficiency = 0;
  cpu_like.gemm_sm_count = 0;  // CPU ranks have no SMs to quantize over
  const CostModel model(load_model("gpt2-mini"), cpu_like);
  SearchOptions options;
  options.gpus = 4;
  options.top = 40;
  options.fixed = parse_fix("zero=0,context=1");  // the twins this test looks for are overlap on and off
  options.fold = false;
  const std::vector<PlanRow> unfolded = search(model, options).best;
  options.top = 10;
  options.fold = true;
  const std::vector<PlanRow> folded = search(model, options).best;
  ASSERT_EQ(folded.size(), 10u);
  std::vector<PlanRow> expected;  // the unfolded rows, first of each set of twins
  size_t twins = 0;
  for (const PlanRow& row : unfolded) {
    bool twin = false;
    for (const PlanRow& kept : expected) twin = twin || same_numbers(kept.breakdown, row.breakdown);
    if (twin) ++twins;
    else if (expected.size() < folded.size()) expected.push_back(row);
  }
  ASSERT_GT(twins, 0u) << "overlap on and off should cost the same where nothing overlaps";
  for (size_t i = 0; i < folded.size(); ++i) {
    // The same plan at each rank: shown, or named among its variants (twins tie).
    const auto& variants = folded[i].same_numbers;
    EXPECT_TRUE(folded[i].config == expected[i].config ||
                std::find(variants.begin(), variants.end(), expected[i].config) != variants.end())
        << "rank " << i + 1;
    EXPECT_TRUE(same_numbers(folded[i].breakdown, expected[i].breakdown)) << "rank " << i + 1;
    for (size_t j = 0; j < i; ++j) EXPECT_FALSE(same_numbers(folded[i].breakdown, folded[j].breakdown));
    for (const ParallelConfig& variant : folded[i].same_numbers) {
      EXPECT_FALSE(variant == folded[i].config);
      EXPECT_FALSE(variant_text(folded[i].config, variant).empty());
    }
  }
  size_t named = 0;
  for (const PlanRow& row : folded) named += row.same_numbers.size();
  EXPECT_GT(named, 0u);
}

TEST(Search, RankByCostPrunesWithoutChangingTheAnswer) {
  const RankBy by = RankBy::cost;
  const CostModel model(load_model("megatron-18b"), load_machine("perlmutter"));
  SearchOptions options;
  options.gpus = 64;
  options.top = 8;
  options.rank_by = by;
  const SearchResult pruned = search(model, options);
  options.prune = false;
  const SearchResult full = search(model, options);
  ASSERT_EQ(pruned.best.size(), full.best.size());
  for (size_t i = 0; i < full.best.size(); ++i) {
    EXPECT_EQ(pruned.best[i].config, full.best[i].config) << "rank " << i + 1;
    const double key = rank_key(by, model, 64, full.best[i].config, full.best[i].breakdown.iter_time);
    if (i > 0) {
      EXPECT_GE(key, rank_key(by, model, 64, full.best[i - 1].config, full.best[i - 1].breakdown.iter_time));
    }
    // Every row carries its goodput.
    EXPECT_GT(full.best[i].training.goodput.goodput, 0.9);
    EXPECT_LT(full.best[i].training.goodput.goodput, 1.0);
  }
  EXPECT_GT(pruned.pruned, 0);
}

TEST(Search, RecordsEveryCostedConfiguration) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  SearchOptions options;
  options.gpus = 32;
  options.prune = false;
  options.record_points = true;
  const SearchResult result = search(model, options);
  ASSERT_FALSE(result.points.empty());
  EXPECT_LE(int64_t(result.points.size()), result.evaluated);
  double fastest = result.points.front().iter_time;
  for (const SpacePoint& p : result.points) {
    EXPECT_LE(p.memory_bytes, model.machine().usable_memory_bytes());
    fastest = std::min(fastest, p.iter_time);
  }
  EXPECT_DOUBLE_EQ(fastest, result.best.front().breakdown.iter_time);
}

// A point for every configuration that fits, though grids whose model states cannot fit are
// counted out (--svg had costed the memory of every setting of a model that fits nowhere: 28 s).
TEST(Search, RecordedPointsAreEveryConfigurationThatFits) {
  const CostModel model(load_model("llama3-70b"), load_machine("selene"));
  SearchOptions options;
  options.gpus = 8;
  options.prune = false;
  options.record_points = true;
  const SearchResult recorded = search(model, options);
  EXPECT_GT(recorded.pruned, 0);
  options.record_points = false;
  options.top = 1000000;
  options.fold = false;
  const SearchResult every = search(model, options);
  EXPECT_EQ(every.pruned, 0);
  EXPECT_EQ(recorded.points.size(), every.best.size());
}

// BLOOM-176B's shape (BigScience, 70 layers, hidden 14336, 112 heads,
// vocabulary 250880, batch 2048) on gpt3-175b's GPT blocks.
TransformerSpec bloom_like() {
  TransformerSpec spec = load_model("gpt3-175b");
  spec.name = "bloom-like";
  spec.layers = 70, spec.hidden = 14336, spec.heads = spec.kv_heads = 112;
  spec.ffn_hidden = 4 * 14336, spec.vocab = 250880, spec.global_batch = 2048;
  return spec;
}

SearchResult run_spec(const TransformerSpec& spec, int64_t gpus, const std::string& fix) {
  const CostModel model(spec, load_machine("selene"));
  SearchOptions options;
  options.gpus = gpus;
  options.top = 5;
  options.fixed = parse_fix(fix);
  return search(model, options);
}

// BLOOM's 12 stages over 70 layers: unequal stages, priced by the slowest.
TEST(Search, SeventyLayersOverTwelveStagesPlan) {
  const SearchResult result = run_spec(bloom_like(), 384, "pipeline=12,y=4,data=8");
  ASSERT_FALSE(result.best.empty());
  const CostModel model(bloom_like(), load_machine("selene"));
  for (const PlanRow& row : result.best) {
    EXPECT_EQ(row.config.pipeline, 12);
    EXPECT_TRUE(row.breakdown.fits);
    const PipelineSplit& split = model.pipeline_split(row.config);
    EXPECT_EQ(split.max_stage_layers(), 6);  // ceil(70/12): 70 = 10·6 + 2·5 (the ends carry the embedding and head)
  }
}

TEST(Search, EveryPipelineSizeUpToTheLayersIsTried) {
  // 5 stages do not divide gpt3-175b's 96 layers; the search tries them.
  const SearchResult result = run("gpt3-175b", "selene", 640, "pipeline=5");
  ASSERT_FALSE(result.best.empty());
  EXPECT_EQ(result.best.front().config.pipeline, 5);
}

TEST(Search, ZeroIsSearchedWhereThereAreReplicas) {
  const SearchResult result = run("gpt3-13b", "selene", 64, "pipeline=1,data=8,y=8", 1000, false);
  std::set<int64_t> stages;
  for (const PlanRow& row : result.best) stages.insert(row.config.zero);
  EXPECT_EQ(stages, (std::set<int64_t>{0, 1, 2}));
  const SearchResult one_replica = run("gpt3-13b", "selene", 8, "data=1,context=1", 1000, false);
  for (const PlanRow& row : one_replica.best) EXPECT_EQ(row.config.zero, 0);  // nothing to shard over
  // Context ranks are part of the group ZeRO shards over (data x context).
  const SearchResult context_ranks = run("gpt3-13b", "selene", 8, "data=1,context=2", 1000, false);
  stages.clear();
  for (const PlanRow& row : context_ranks.best) stages.insert(row.config.zero);
  EXPECT_EQ(stages, (std::set<int64_t>{0, 1, 2}));
}

// An odd sequence length plans without context parallelism (2·context divides only with context > 1).
TEST(Search, AnOddSequencePlansWithoutContextParallelism) {
  TransformerSpec spec = load_model("gpt2-124m");
  spec.seq_len = 1023;
  const SearchResult result = run_spec(spec, 8, "");
  ASSERT_FALSE(result.best.empty());
  for (const PlanRow& row : result.best) EXPECT_EQ(row.config.context, 1);
  EXPECT_FALSE(run_spec(spec, 8, "context=1").best.empty());
}

// A held recompute_layers plans only on chunks that hold that many layers; more than the
// model has is refused, saying so.
TEST(Search, HeldRecomputeLayersFitTheChunks) {
  const TransformerSpec spec = load_model("gpt3-13b");  // 40 layers
  // 4 stages: chunks of 10 layers (interleave 1), 5 (interleave 2), ...: only the first hold 7.
  const SearchResult free = run("gpt3-13b", "selene", 64, "pipeline=4", 1000, false);
  EXPECT_TRUE(std::any_of(free.best.begin(), free.best.end(),
                          [](const PlanRow& row) { return row.config.interleave > 1; }));
  const SearchResult result = run("gpt3-13b", "selene", 64, "pipeline=4,recompute_layers=7", 1000, false);
  ASSERT_FALSE(result.best.empty());
  for (const PlanRow& row : result.best) {
    const ParallelConfig& c = row.config;
    EXPECT_EQ(c.interleave, 1) << config_text(c, ",");
    EXPECT_GE(split_pipeline(spec, c.pipeline, c.interleave).max_chunk_layers(), 7) << config_text(c, ",");
  }
  try {
    run("gpt3-13b", "selene", 64, "recompute_layers=41");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("with --fix recompute_layers=41 is valid for gpt3-13b (recompute_layers=41 is more than "
                           "the 40 layers of the model)"),
              std::string::npos) << message;
  }
}

// A held z that no microbatch is a multiple of says so: it named the default microbatch=1, which the
// user never set.
TEST(Search, AHeldZNoMicrobatchCanHoldSaysWhy) {
  try {
    run("gpt3-13b", "selene", 24, "z=3");  // a batch of 1024: every microbatch is a power of two
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("sequences per data rank is a multiple of z=3"), std::string::npos) << message;
    EXPECT_EQ(message.find("microbatch=1"), std::string::npos) << message;
  }
}

// An impossible --fix names the user's values and what does not divide what.
TEST(Search, ImpossibleFixedGridNamesTheUsersValues) {
  try {
    run_spec(bloom_like(), 384, "pipeline=12,data=5");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--fix pipeline=12,data=5"), std::string::npos) << message;
    EXPECT_NE(message.find("pipeline=12*data=5 = 60 does not divide the 384 GPUs"), std::string::npos) << message;
  }
  try {
    run_spec(bloom_like(), 384, "pipeline=12,y=32");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--fix pipeline=12,y=32"), std::string::npos) << message;
    EXPECT_NE(message.find("y=32 does not divide heads=112"), std::string::npos) << message;
    EXPECT_EQ(message.find("data*microbatch=384"), std::string::npos) << message;  // no candidate the user never asked for
  }
}

}  // namespace
}  // namespace axo
