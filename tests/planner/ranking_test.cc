// Ranking keys: iteration time and cost, each with a bound no configuration
// beats; goodput is refused, naming cost.
#include "planner/ranking.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "model/presets.h"

namespace axo {
namespace {

TEST(Ranking, KeysAndTheirBounds) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  ParallelConfig c;
  c.pipeline = 2, c.data = 4, c.y = 8, c.microbatch = 2, c.recompute = Recompute::full;
  const double iteration = model.evaluate(c).iter_time;
  const double compute = model.compute_lower_bound(c);
  ASSERT_LE(compute, iteration);
  const double g = goodput(checkpoint_state_bytes(model.spec(), c), iteration, 64, model.machine()).goodput;
  EXPECT_DOUBLE_EQ(rank_key(RankBy::iteration, model, 64, c, iteration), iteration);
  EXPECT_DOUBLE_EQ(rank_key(RankBy::cost, model, 64, c, iteration), iteration / g);
  for (RankBy by : {RankBy::iteration, RankBy::cost}) {
    EXPECT_LE(rank_key_bound(by, model, 64, c, compute), rank_key(by, model, 64, c, iteration)) << to_string(by);
  }
}

TEST(Ranking, ParseNamesTheChoices) {
  EXPECT_EQ(parse_rank_by("cost"), RankBy::cost);
  try {
    parse_rank_by("speed");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("iteration or cost"), std::string::npos);
  }
  try {
    parse_rank_by("goodput");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--rank-by cost ranks by iteration time / goodput"), std::string::npos);
  }
}

}  // namespace
}  // namespace axo
