// --explain lists every collective with its group and exposed time.
#include "planner/explain.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(Explain, TextNamesCollectivesGroupsAndTotals) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  ParallelConfig c;
  c.x = 2, c.y = 2, c.z = 2, c.pipeline = 2, c.data = 2, c.microbatch = 2;
  const std::string text = explain_text(model, c);
  EXPECT_NE(text.find("all_gather weights (qkv)"), std::string::npos);
  EXPECT_NE(text.find("z:2/2"), std::string::npos);
  EXPECT_NE(text.find("reduce_scatter dW (mlp_down)"), std::string::npos);
  EXPECT_NE(text.find("send/recv"), std::string::npos);
  EXPECT_NE(text.find("Iteration breakdown"), std::string::npos);
  // The model TFLOP/s say which attention FLOPs they count (the time prices the causal half).
  EXPECT_NE(text.find("attention counted over the whole s x s"), std::string::npos) << text;
  const auto json = explain_json(model, c);
  ASSERT_TRUE(json.is_array());
  bool found = false;
  for (const auto& item : json) {
    if (item["name"] == "all_reduce gradients") {
      found = true;
      EXPECT_EQ(item["group"], "data");
      EXPECT_LE(item["exposed_seconds"].get<double>(), item["seconds"].get<double>());
    }
  }
  EXPECT_TRUE(found);
}

TEST(Explain, ZeroListsItsReduceScatterAndAllGather) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  ParallelConfig c;
  c.y = 8, c.data = 8, c.microbatch = 2, c.zero = 1;
  const std::string text = explain_text(model, c);
  EXPECT_NE(text.find("zero=1"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce_scatter gradients"), std::string::npos) << text;
  EXPECT_NE(text.find("all_gather updated parameters"), std::string::npos) << text;
  EXPECT_EQ(text.find("all_reduce gradients"), std::string::npos) << text;
  c.data = 1;
  c.y = 8;
  EXPECT_NE(explain_text(model, c).find("zero=1 with data=1 and context=1 changes nothing"), std::string::npos);
  c.context = 2, c.y = 4;  // context ranks are a group to shard over
  EXPECT_EQ(explain_text(model, c).find("changes nothing"), std::string::npos);
}

TEST(Explain, PrintsThePipelineSplit) {
  const CostModel model(load_model("gpt2-124m"), load_machine("dgx-h100"));
  ParallelConfig c;
  c.pipeline = 2, c.data = 4, c.microbatch = 8;
  EXPECT_NE(explain_text(model, c).find("layers per stage: 8,4"), std::string::npos) << explain_text(model, c);
  // The rows do not add up to a pipelined breakdown by themselves: the text says how they relate.
  EXPECT_NE(explain_text(model, c).find("(pipelined: layer rows count the slowest stage's layers"), std::string::npos);
  c.pipeline = 1, c.data = 8;
  EXPECT_EQ(explain_text(model, c).find("(pipelined:"), std::string::npos);
}

}  // namespace
}  // namespace axo
