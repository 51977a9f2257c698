// Pipeline schedule names: each reads back as itself; anything else is an input error naming it.
#include "model/schedule.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace axo {
namespace {

TEST(Schedule, NamesReadBack) {
  for (Schedule schedule : {Schedule::message_driven, Schedule::one_f_one_b}) {
    EXPECT_EQ(parse_schedule(to_string(schedule)), schedule);
  }
  EXPECT_STREQ(to_string(Schedule::message_driven), "message-driven");
  EXPECT_STREQ(to_string(Schedule::one_f_one_b), "1f1b");
}

TEST(Schedule, AnotherNameIsAnInputError) {
  try {
    parse_schedule("1F1B");
    FAIL() << "read 1F1B";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "expected message-driven or 1f1b, got '1F1B'");
  }
}

}  // namespace
}  // namespace axo
