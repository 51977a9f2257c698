// The remembered pipeline split (model/cost_split.h).
#include "model/cost_split.h"

#include <gtest/gtest.h>

#include <thread>

#include "model/error.h"
#include "model/presets.h"

namespace axo {
namespace {

TEST(CostSplit, RemembersWhatSplitPipelineSays) {
  const TransformerSpec spec = load_model("llama3-70b");
  const RememberedSplit& split = remembered_split(spec, 4, 1);
  EXPECT_EQ(split.split.chunks(), split_pipeline(spec, 4, 1).chunks());
  EXPECT_EQ(split.stage_layers, (std::vector<int64_t>{21, 20, 20, 19}));
  EXPECT_EQ(&remembered_split(spec, 4, 1), &split);  // computed once
  EXPECT_EQ(layers_by_stage(split_pipeline(spec, 2, 2)), (std::vector<int64_t>{41, 39}));
}

TEST(CostSplit, TellsModelsApartByWhatTheSplitWeighs) {
  TransformerSpec spec = load_model("gpt2-124m");  // 12 layers, the head worth 4.5 of them
  EXPECT_EQ(remembered_split(spec, 2, 1).stage_layers, (std::vector<int64_t>{8, 4}));
  spec.vocab = 64;  // a negligible head: equal stages
  EXPECT_EQ(remembered_split(spec, 2, 1).stage_layers, (std::vector<int64_t>{6, 6}));
  EXPECT_THROW(remembered_split(spec, 8, 2), InputError);
}

TEST(CostSplit, ThreadsShareOneCopy) {
  const TransformerSpec spec = load_model("gpt3-175b");
  std::vector<const RememberedSplit*> seen(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int64_t stages : {2, 3, 4, 6, 8, 12, 16}) remembered_split(spec, stages, 1);
      seen[t] = &remembered_split(spec, 5, 2);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const RememberedSplit* split : seen) EXPECT_EQ(split, seen[0]);
  EXPECT_EQ(seen[0]->stage_layers.size(), 5u);
}

}  // namespace
}  // namespace axo
