// A test fixture for the training CLI tests: a temporary folder holding the
// fortunes "literature" file encoded as byte-level token shards
// (lit_train_*.bin, lit_val_*.bin), removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/run_command.h"

namespace axo::testing {

class EncodedTextTest : public ::testing::Test {
 protected:
  explicit EncodedTextTest(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {}
  void SetUp() override {
    std::filesystem::create_directories(dir_);
    const CommandResult r = run_axo("data encode --in /usr/share/games/fortunes/literature --out " + path("lit"));
    ASSERT_EQ(r.code, 0) << r.output;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace axo::testing
