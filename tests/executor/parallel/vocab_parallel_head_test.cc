// The vocabulary-parallel embedding and head: each Y rank holds the rows
// model/vocab_parallel.h's rule gives it (1/y of the padded vocabulary, as
// the memory model charges), the rows past llm.c's padded vocabulary are
// padding, and the Y ranks together hold every row once. (Training against
// the serial executor on grids with y > 1 is parallel_gpt_test's.)
#include "executor/parallel/vocab_parallel_head.h"

#include <gtest/gtest.h>

#include "executor/parallel/shard_layout.h"
#include "model/stage_partition.h"

namespace axo {
namespace {

GptShape shape_with_vocab(int64_t vocab) {
  GptShape g;
  g.layers = 2, g.heads = 4, g.channels = 32, g.max_seq = 16, g.vocab = vocab, g.padded_vocab = (vocab + 127) / 128 * 128;
  return g;
}

TEST(VocabParallelHead, EachYRankHoldsItsSliceOfThePaddedVocabulary) {
  const GptShape g = shape_with_vocab(300);  // llm.c pads to 384; with y = 4 the rule pads to 512
  for (int64_t y : {1, 2, 4}) {
    ParallelConfig config;
    config.y = y;
    int64_t rows = 0, real = 0;
    for (int64_t j = 0; j < y; ++j) {
      const VocabSlice slice = executor_vocab_slice(g, config, j);
      EXPECT_EQ(slice, head_vocab_slice(gpt_spec(g, g.max_seq), y, j));
      EXPECT_EQ(slice.begin, rows);
      rows += slice.rows(), real += slice.real_rows();
    }
    EXPECT_EQ(rows % (128 * y), 0) << y;
    EXPECT_EQ(real, 300) << y;
  }
}

TEST(VocabParallelHead, TheLayoutBooksOneYthOfTheEmbeddingAndCoversItOnce) {
  const GptShape g = shape_with_vocab(300);
  ParallelConfig config;
  config.y = 4, config.x = 2;
  const PipelineSplit split = split_pipeline(gpt_spec(g, g.max_seq), 1, 1);
  std::vector<int> covered(size_t(g.padded_vocab * g.channels), 0);
  for (int64_t j = 0; j < 4; ++j) {
    for (int64_t i = 0; i < 2; ++i) {
      GridCoords at;
      at.y = int(j), at.x = int(i);
      const ShardLayout layout(g, config, at, split);
      const LocalTensor* wte = layout.find(GptTensor::wte);
      ASSERT_NE(wte, nullptr);
      EXPECT_EQ(wte->size, 512 / 4 * 16);  // V'/y rows of C/x columns
      EXPECT_TRUE(wte->owned);             // unique per (x, y)
      EXPECT_EQ(wte->group, GradientGroup::z_and_data);
      for (const ShardSegment& s : wte->segments) {
        for (int64_t e = s.global; e < s.global + s.length; ++e) ++covered[size_t(e)];
      }
    }
  }
  // llm.c's 384 rows (its padding included) once each; the rule's rows 384..511 are nobody's in the full vector.
  for (int count : covered) ASSERT_EQ(count, 1);
}

}  // namespace
}  // namespace axo
