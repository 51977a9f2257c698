// Comma-separated option values (model/comma_list.h).
#include "model/comma_list.h"

#include <gtest/gtest.h>

#include "tests/input_error_of.h"

namespace axo {
namespace {

TEST(CommaList, SplitsAtCommasAndRefusesEmptyItems) {
  EXPECT_EQ(comma_list("a,bc,d", "--x"), (std::vector<std::string>{"a", "bc", "d"}));
  EXPECT_EQ(comma_list("a", "--x"), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(comma_list("", "--x").empty());
  EXPECT_EQ(comma_list(" a , bc,d ", "--x"), (std::vector<std::string>{"a", "bc", "d"}));  // as "a,bc,d"
  for (const char* text : {"a,,b", "a,", ",a", ",", "a, ,b"}) {
    EXPECT_EQ(testing::input_error_of([&] { comma_list(text, "--ops"); }),
              "--ops: '" + std::string(text) + "': an empty item (two commas, or one at an end)");
  }
}

}  // namespace
}  // namespace axo
