// The configuration search: completeness, ranking, --fix, pruning, errors.
#include "planner/search.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "model/presets.h"

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
                               "overlap=on,sequence_parallel=off,interleave=1,order=xyzdp");
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

TEST(Search, NoValidFactorizationSaysWhy) {
  try {
    run("gpt2-124m", "selene", 7);  // 7 divides no dimension of GPT-2 124M
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("7 GPUs: no split"), std::string::npos) << message;
    EXPECT_NE(message.find("data*microbatch=7 does not divide global_batch=512"), std::string::npos) << message;
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
    run("gpt3-13b", "selene", 64, "context=3");  // 2*3 does not divide 2048
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("context=3: 2*context=6 does not divide seq_len=2048"), std::string::npos) << message;
  }
}

TEST(Search, NothingFitsGivesTheClosest) {
  const SearchResult result = run("llama3-405b", "summit", 6);
  EXPECT_TRUE(result.best.empty());
  ASSERT_TRUE(result.closest.has_value());
  EXPECT_FALSE(result.closest->breakdown.fits);
  EXPECT_GT(result.closest->breakdown.memory.total(), result.closest->breakdown.memory_capacity);
}

}  // namespace
}  // namespace axo
