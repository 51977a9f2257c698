// `axo data encode` end to end: encoding again into a prefix replaces the
// shards an earlier encode left there, and no other file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/run_command.h"

namespace {

namespace fs = std::filesystem;

using Result = axo::testing::CommandResult;

class DataEncode : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_);
    std::ofstream(path("long.txt")) << std::string(600, 'a');
    std::ofstream(path("short.txt")) << std::string(150, 'b');
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  Result encode(const std::string& text, const std::string& options) const {
    return axo::testing::run_axo("data encode --in " + path(text) + " --out " + path("s") + " " + options);
  }
  fs::path dir_ = fs::temp_directory_path() / ("axo_data_encode_" + std::to_string(::getpid()));
};

TEST_F(DataEncode, EncodingAgainRemovesTheOldShardsAndNothingElse) {
  // 540 training tokens in shards of 100: six; 60 validation tokens: one.
  Result r = encode("long.txt", "--shard-tokens 100");
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_TRUE(fs::exists(path("s_train_000005.bin"))) << r.output;
  ASSERT_TRUE(fs::exists(path("s_val_000000.bin"))) << r.output;
  EXPECT_EQ(r.output.find("removed"), std::string::npos) << r.output;  // nothing there before
  // Files a glob might match but the encoder does not write, and another prefix's shards.
  const char* kept[] = {"s_train_000001.bin.bak", "s_train_x.bin", "s_train_00001.bin", "s2_train_000000.bin",
                        "t_train_000000.bin", "s_test_000000.bin"};
  for (const char* name : kept) std::ofstream(path(name)) << "x";
  r = encode("short.txt", "--val-fraction 0");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("removed 7 old shards of " + path("s")), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(path("s_train_000000.bin")));
  for (int i = 1; i <= 5; ++i) EXPECT_FALSE(fs::exists(path("s_train_00000" + std::to_string(i) + ".bin"))) << i;
  EXPECT_FALSE(fs::exists(path("s_val_000000.bin")));
  for (const char* name : kept) EXPECT_TRUE(fs::exists(path(name))) << name;
  // The new shard holds the new text alone: 150 tokens after the 1 KiB header.
  EXPECT_EQ(fs::file_size(path("s_train_000000.bin")), 1024u + 2u * 150u);
}

TEST_F(DataEncode, AFailedEncodeRemovesNothing) {
  ASSERT_EQ(encode("long.txt", "--shard-tokens 100").code, 0);
  std::ofstream(path("tiny.txt")) << "b";
  const Result r = encode("tiny.txt", "");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(fs::exists(path("s_train_000005.bin"))) << r.output;
  EXPECT_TRUE(fs::exists(path("s_val_000000.bin"))) << r.output;
}

// An --in file that is a shard encoding would replace is refused, and kept (it was deleted); a NaN
// share for validation is refused (it wrote no validation shard).
TEST_F(DataEncode, AnInputAmongTheShardsItReplacesIsRefused) {
  ASSERT_EQ(encode("long.txt", "").code, 0);
  const auto size = fs::file_size(path("s_train_000000.bin"));
  Result r = axo::testing::run_axo("data encode --in " + path("s_train_000000.bin") + " --out " + path("s"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is a shard of --out " + path("s") + ", which encoding replaces"), std::string::npos)
      << r.output;
  EXPECT_EQ(fs::file_size(path("s_train_000000.bin")), size);
  r = encode("long.txt", "--val-fraction nan");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("'nan' is not a finite number"), std::string::npos) << r.output;
}

}  // namespace
