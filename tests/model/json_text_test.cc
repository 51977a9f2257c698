// Parsing JSON input into InputErrors (model/json_text.h).
#include "model/json_text.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

TEST(JsonText, MalformedTextNamesTheSourceAndByte) {
  EXPECT_NE(testing::input_error_of([] { parse_json_text("{\"a\": }", "r.json"); })
                .find("r.json: malformed JSON at byte 7"),
            std::string::npos);
}

// Nesting a reader would recurse through (printing the value in a message) is refused while parsing:
// 70,000 levels crashed axo report with a stack overflow.
TEST(JsonText, DeepNestingIsRefused) {
  const auto nested = [](int depth) { return std::string(size_t(depth), '[') + std::string(size_t(depth), ']'); };
  EXPECT_NO_THROW(parse_json_text(nested(kMostJsonDepth), "r.json"));
  const std::string with_value = std::string(size_t(kMostJsonDepth), '[') + "1" + std::string(size_t(kMostJsonDepth), ']');
  EXPECT_NO_THROW(parse_json_text(with_value, "r.json"));  // 64 levels, a value in the innermost
  EXPECT_EQ(testing::input_error_of([&] { parse_json_text(nested(70000), "r.json"); }),
            "r.json: JSON nested deeper than 64 arrays and objects: no axo input has more than a few levels");
  EXPECT_THROW(parse_json_text("{\"steps\": " + nested(kMostJsonDepth) + "}", "r.json"), InputError);
}

}  // namespace
}  // namespace axo
