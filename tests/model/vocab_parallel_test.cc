// The LM head's vocabulary rule (model/vocab_parallel.h).
#include "model/vocab_parallel.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "model/presets.h"

namespace axo {
namespace {

TEST(VocabParallel, PadsToAMultipleOf128TimesY) {
  const TransformerSpec spec = load_model("gpt3-175b");  // V = 50257
  EXPECT_EQ(padded_vocab(spec, 1), 50304);                // 393 · 128
  EXPECT_EQ(padded_vocab(spec, 8), 51200);                // 50 · 1024
  EXPECT_EQ(padded_vocab(spec, 3), 50304);                // 131 · 384
}

TEST(VocabParallel, YRanksTakeContiguousEqualSlicesOfThePaddedVocabulary) {
  const TransformerSpec spec = load_model("gpt3-175b");
  const int64_t y = 8, rows = 51200 / 8;
  int64_t next = 0, real = 0;
  for (int64_t j = 0; j < y; ++j) {
    const VocabSlice slice = head_vocab_slice(spec, y, j);
    EXPECT_EQ(slice.begin, next);
    EXPECT_EQ(slice.rows(), rows);
    next = slice.end;
    real += slice.real_rows();
  }
  EXPECT_EQ(next, 51200);
  EXPECT_EQ(real, 50257);  // every real token id in exactly one slice
  const VocabSlice last = head_vocab_slice(spec, y, y - 1);
  EXPECT_EQ(last.real_end, 50257);
  EXPECT_EQ(last.real_rows(), 50257 - 7 * rows);  // the rest is padding
}

TEST(VocabParallel, ARankOutsideTheGroupIsAnError) {
  const TransformerSpec spec = load_model("gpt2-124m");
  EXPECT_THROW(head_vocab_slice(spec, 4, 4), std::out_of_range);
  EXPECT_THROW(head_vocab_slice(spec, 4, -1), std::out_of_range);
}

}  // namespace
}  // namespace axo
