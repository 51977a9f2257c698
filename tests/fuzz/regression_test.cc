// Replays every saved fuzz input (tests/data/fuzz/<target>/*) through its
// parser: each must parse or be rejected with an InputError, nothing else.
// Inputs that once crashed, hung or tripped a sanitizer live here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fuzz/fuzz_targets.h"

namespace {

namespace fs = std::filesystem;

TEST(FuzzRegression, EverySavedInputIsHandled) {
  const fs::path root = fs::path(AXO_SOURCE_DIR) / "tests" / "data" / "fuzz";
  size_t replayed = 0;
  for (const auto& target : axo::fuzz::targets()) {
    const fs::path dir = root / target.name;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      EXPECT_NO_THROW(target.run(bytes.str())) << entry.path();
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0u) << "no saved inputs under " << root;
}

}  // namespace
