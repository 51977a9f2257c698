// Learning-rate schedules against values by hand.
#include "executor/train/lr_schedule.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace axo {
namespace {

// lr 1e-3, floor 1e-4 (min_lr_fraction 0.1), 10 warm-up steps of 110.
LrScheduleOptions options(LrSchedule schedule) { return {schedule, 1e-3, 0.1, 10, 110}; }

TEST(LrSchedule, ConstantKeepsTheRateAfterWarmUp) {
  const LrScheduleOptions o = options(LrSchedule::constant);
  EXPECT_DOUBLE_EQ(learning_rate(o, 0), 1e-4);  // warm-up: 1e-3 · 1/10
  for (int64_t s : {10, 11, 60, 109, 500}) EXPECT_DOUBLE_EQ(learning_rate(o, s), 1e-3) << s;
  // Without warm-up, every step.
  EXPECT_DOUBLE_EQ(learning_rate({LrSchedule::constant, 6e-4, 0.1, 0, 20}, 0), 6e-4);
  EXPECT_DOUBLE_EQ(learning_rate({LrSchedule::constant, 6e-4, 0.1, 0, 20}, 19), 6e-4);
}

TEST(LrSchedule, WarmUpIsLinearForEverySchedule) {
  for (LrSchedule s : {LrSchedule::cosine, LrSchedule::linear, LrSchedule::constant}) {
    EXPECT_DOUBLE_EQ(learning_rate(options(s), 4), 5e-4) << to_string(s);  // 1e-3 · 5/10
    EXPECT_DOUBLE_EQ(learning_rate(options(s), 9), 1e-3) << to_string(s);
  }
}

// After warm-up, progress p = (s − 10)/100.
TEST(LrSchedule, CosineByHand) {
  const LrScheduleOptions o = options(LrSchedule::cosine);
  EXPECT_DOUBLE_EQ(learning_rate(o, 10), 1e-3);  // p = 0: 1e-4 + 9e-4 · (1 + 1)/2
  EXPECT_NEAR(learning_rate(o, 35), 1e-4 + 9e-4 * 0.5 * (1 + 0.70710678118654752), 1e-15);  // p = 1/4
  EXPECT_NEAR(learning_rate(o, 60), 5.5e-4, 1e-15);  // p = 1/2: 1e-4 + 9e-4 / 2
  EXPECT_NEAR(learning_rate(o, 110), 1e-4, 1e-15);   // p = 1: the floor
  EXPECT_NEAR(learning_rate(o, 200), 1e-4, 1e-15);   // and it stays there
}

TEST(LrSchedule, LinearByHand) {
  const LrScheduleOptions o = options(LrSchedule::linear);
  EXPECT_DOUBLE_EQ(learning_rate(o, 10), 1e-3);
  EXPECT_NEAR(learning_rate(o, 35), 1e-3 - 9e-4 * 0.25, 1e-15);  // 7.75e-4
  EXPECT_NEAR(learning_rate(o, 60), 5.5e-4, 1e-15);
  EXPECT_NEAR(learning_rate(o, 110), 1e-4, 1e-15);
}

TEST(LrSchedule, ZeroRateStaysZero) {
  for (LrSchedule s : {LrSchedule::cosine, LrSchedule::linear, LrSchedule::constant}) {
    for (int64_t step : {0, 10, 60, 109}) EXPECT_EQ(learning_rate({s, 0, 0.1, 10, 110}, step), 0);
  }
}

TEST(LrSchedule, ParseNamesTheChoices) {
  EXPECT_EQ(parse_lr_schedule("constant"), LrSchedule::constant);
  EXPECT_EQ(parse_lr_schedule("linear"), LrSchedule::linear);
  EXPECT_EQ(parse_lr_schedule("cosine"), LrSchedule::cosine);
  try {
    parse_lr_schedule("step");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cosine, linear or constant"), std::string::npos);
  }
}

}  // namespace
}  // namespace axo
