// Opening and reading the files users name (model/input_file.h).
#include "model/input_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/input_error_of.h"

namespace axo {
namespace {

namespace fs = std::filesystem;

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("axo_input_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(InputFile, ReadsEveryByte) {
  const std::string bytes("a\0b\r\nc", 6);
  std::ofstream((dir_ / "f.bin").string(), std::ios::binary) << bytes;
  EXPECT_EQ(read_input_file((dir_ / "f.bin").string()), bytes);
  EXPECT_EQ(read_input_file((dir_ / "f.bin").string(), "checkpoint"), bytes);
}

// A folder opens as a stream on Linux and reads as nothing: it is named for what it is, where the
// readers said "expected a mapping" or "too short for a token shard header".
TEST_F(InputFile, AFolderOrAMissingFileIsNamed) {
  const std::string folder = dir_.string(), absent = (dir_ / "absent.yaml").string();
  EXPECT_EQ(testing::input_error_of([&] { read_input_file(folder); }), folder + ": is a folder, not a file");
  EXPECT_EQ(testing::input_error_of([&] { open_input_file(folder, "token shard"); }),
            folder + ": is a folder, not a token shard");
  EXPECT_EQ(testing::input_error_of([&] { read_input_file(absent, "checkpoint"); }),
            absent + ": cannot open the checkpoint");
}

}  // namespace
}  // namespace axo
