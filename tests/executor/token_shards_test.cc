// Token shards: round trip, errors named by file, disjoint rank slices.
#include "executor/data/token_shards.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "model/error.h"

namespace axo {
namespace {

namespace fs = std::filesystem;

class Shards : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_ = fs::temp_directory_path() / ("axo_shards_" + std::to_string(::getpid()));
};

TEST_F(Shards, RoundTripAndBatches) {
  std::vector<uint16_t> tokens(1001);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = uint16_t(i % 300);
  write_token_shard(path("a_000.bin"), std::vector<uint16_t>(tokens.begin(), tokens.begin() + 500));
  write_token_shard(path("a_001.bin"), std::vector<uint16_t>(tokens.begin() + 500, tokens.end()));
  EXPECT_EQ(read_token_shard(path("a_001.bin")).size(), 501u);
  TokenStream stream(path("a_*.bin"));
  EXPECT_EQ(stream.tokens(), 1001);
  std::vector<int> inputs(2 * 10), targets(2 * 10);
  stream.next_batch(2, 10, inputs.data(), targets.data());
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(inputs[size_t(i)], i);
    EXPECT_EQ(targets[size_t(i)], i + 1);
  }
  EXPECT_EQ(stream.position(), 1);
}

TEST_F(Shards, RanksReadDisjointWindows) {
  std::vector<uint16_t> tokens(401);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = uint16_t(i);
  write_token_shard(path("b.bin"), tokens);
  std::set<int> seen;
  for (int rank = 0; rank < 4; ++rank) {
    TokenStream stream(path("b.bin"), rank, 4);
    std::vector<int> inputs(10), targets(10);
    stream.next_batch(1, 10, inputs.data(), targets.data());
    for (int t : inputs) EXPECT_TRUE(seen.insert(t).second) << "token " << t << " read twice";
  }
}

// Past the end of the data, 4 ranks of 2 sequences read what one rank of 8 reads: the stream wraps
// at whole batches of all ranks (it wrapped at each rank's windows, a different order).
TEST_F(Shards, RanksWrapAsOneRankReadingTheirWholeBatch) {
  std::vector<uint16_t> tokens(700);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = uint16_t(i);
  write_token_shard(path("w.bin"), tokens);
  TokenStream serial(path("w.bin"));
  std::vector<int> all(8 * 10), all_targets(all.size()), part(2 * 10), part_targets(part.size());
  std::vector<TokenStream> ranks;
  for (int rank = 0; rank < 4; ++rank) ranks.emplace_back(path("w.bin"), rank, 4);
  for (int step = 0; step < 20; ++step) {  // 8 whole batches of 80 tokens: wraps at 8
    serial.next_batch(8, 10, all.data(), all_targets.data());
    for (int rank = 0; rank < 4; ++rank) {
      ranks[size_t(rank)].next_batch(2, 10, part.data(), part_targets.data());
      for (size_t i = 0; i < part.size(); ++i) {
        ASSERT_EQ(part[i], all[size_t(rank) * part.size() + i]) << "step " << step << " rank " << rank;
        ASSERT_EQ(part_targets[i], all_targets[size_t(rank) * part.size() + i]);
      }
    }
  }
  // Data smaller than the batch of all ranks is refused on every rank, not read twice.
  write_token_shard(path("n.bin"), std::vector<uint16_t>(300, 1));
  TokenStream last(path("n.bin"), 3, 4);
  std::vector<int> inputs(2 * 64), targets(inputs.size());
  try {
    last.next_batch(2, 64, inputs.data(), targets.data());
    FAIL() << "a rank read its window of data smaller than one batch";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fewer than one batch of 8 sequences of 64 + 1 = 513"), std::string::npos)
        << e.what();
  }
}

TEST_F(Shards, ErrorsNameTheFile) {
  std::ofstream(path("bad.bin"), std::ios::binary) << std::string(1024, 'x');
  try {
    read_token_shard(path("bad.bin"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path("bad.bin") + ": not a token shard"), std::string::npos);
  }
  write_token_shard(path("short.bin"), std::vector<uint16_t>(100, 1));
  fs::resize_file(path("short.bin"), 1024 + 50);
  EXPECT_THROW(read_token_shard(path("short.bin")), InputError);
  // A header that promises fewer tokens than the file holds: llm.c's loader refuses it too.
  write_token_shard(path("long.bin"), std::vector<uint16_t>(100, 1));
  fs::resize_file(path("long.bin"), 1024 + 300);
  try {
    read_token_shard(path("long.bin"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the header promises 100 tokens, the file holds 300 bytes after it, not 200"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(TokenStream(path("none_*.bin")), InputError);
  write_token_shard(path("tiny.bin"), std::vector<uint16_t>(5, 1));
  TokenStream tiny(path("tiny.bin"));
  std::vector<int> inputs(8), targets(8);
  EXPECT_THROW(tiny.next_batch(1, 8, inputs.data(), targets.data()), InputError);
}

}  // namespace
}  // namespace axo
