// Tests for atomic file writing (model/atomic_file.h).
#include "model/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "model/error.h"

namespace axo {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("axo_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(AtomicFile, ReplacesTheContentAndLeavesNoTemporary) {
  const std::string path = temp_path("atomic.txt");
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second\n");
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "second");
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos);
  }
  std::remove(path.c_str());
}

TEST(AtomicFile, AMissingFolderIsAnInputErrorNamingThePath) {
  const std::string path = temp_path("no-such-folder") + "/plan.yaml";
  try {
    write_file_atomically(path, "x");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace axo
