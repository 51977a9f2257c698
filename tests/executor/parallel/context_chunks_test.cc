// A context rank's chunks: two of 2·c per sequence, r and 2c−1−r, at their
// global positions; c = 1 is the whole sequence.
#include "executor/parallel/context_chunks.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include "model/error.h"

namespace axo {
namespace {

std::vector<int64_t> positions(const ContextChunks& chunks) {
  std::vector<int64_t> p;
  for (int64_t j = 0; j < chunks.local_length(); ++j) p.push_back(chunks.position(j));
  return p;
}

TEST(ContextChunksTest, RankRHoldsChunksRAndTwoCMinusOneMinusR) {
  // T = 8, c = 2: chunks of 2; rank 0 holds chunks 0 and 3, rank 1 chunks 1 and 2.
  EXPECT_EQ(positions(ContextChunks(2, 0, 8)), (std::vector<int64_t>{0, 1, 6, 7}));
  EXPECT_EQ(positions(ContextChunks(2, 1, 8)), (std::vector<int64_t>{2, 3, 4, 5}));
  // c = 4, T = 16: rank 1 holds chunks 1 and 6.
  EXPECT_EQ(positions(ContextChunks(4, 1, 16)), (std::vector<int64_t>{2, 3, 12, 13}));
  EXPECT_EQ(positions(ContextChunks(1, 0, 3)), (std::vector<int64_t>{0, 1, 2}));
}

TEST(ContextChunksTest, TheRanksTogetherHoldEveryPositionOnceWithEqualCausalWork) {
  for (int64_t c : {2, 3, 4}) {
    const int64_t T = 4 * c;
    std::set<int64_t> seen;
    std::set<int64_t> work;  // Σ over the rank's positions of the keys each sees (position + 1)
    for (int64_t r = 0; r < c; ++r) {
      const std::vector<int64_t> p = positions(ContextChunks(c, r, T));
      seen.insert(p.begin(), p.end());
      work.insert(std::accumulate(p.begin(), p.end(), int64_t(0)) + int64_t(p.size()));
    }
    EXPECT_EQ(int64_t(seen.size()), T) << "c = " << c;
    EXPECT_EQ(work.size(), 1u) << "c = " << c << ": unequal causal work";
  }
}

TEST(ContextChunksTest, SelectsTheRanksTokensOfEachSequence) {
  std::vector<int> batch(16);
  std::iota(batch.begin(), batch.end(), 100);  // two sequences of 8
  EXPECT_EQ(ContextChunks(2, 1, 8).select(batch.data(), 2), (std::vector<int>{102, 103, 104, 105, 110, 111, 112, 113}));
  EXPECT_EQ(ContextChunks(1, 0, 8).select(batch.data(), 2), batch);
}

TEST(ContextChunksTest, RunsOfConsecutivePositionsCoverTheRowsAsked) {
  // Rank 0 of c = 2, T = 8 (positions 0 1 6 7 per sequence); rows 1 … 6 of [·, 4].
  std::vector<std::tuple<int64_t, int64_t, int64_t>> runs;
  ContextChunks(2, 0, 8).for_each_run(1, 6, [&](int64_t row, int64_t n, int64_t p) { runs.emplace_back(row, n, p); });
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> expected = {{1, 1, 1}, {2, 2, 6}, {4, 2, 0}, {6, 1, 6}};
  EXPECT_EQ(runs, expected);
}

TEST(ContextChunksTest, RejectsASequenceThatTwiceTheContextDoesNotDivide) {
  try {
    ContextChunks(3, 0, 8);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2 × context = 6 does not divide the sequence of 8 tokens"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(ContextChunks(1, 0, 7));
}

}  // namespace
}  // namespace axo
