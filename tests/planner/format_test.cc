// printf into a string (planner/format.h).
#include "planner/format.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

TEST(Format, PrintsItsValues) {
  EXPECT_EQ(format("%.2f s on %lld GPUs (%s)", 1.005, 16384LL, "fp8"), "1.00 s on 16384 GPUs (fp8)");
  EXPECT_EQ(format("no values"), "no values");
}

TEST(Format, CutsTheTextAt511Characters) {
  const std::string long_text(600, 'a');
  EXPECT_EQ(format("%s", long_text.c_str()), std::string(511, 'a'));
}

}  // namespace
}  // namespace axo
