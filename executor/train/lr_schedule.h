// The learning rate of each optimizer step (`axo train --lr-schedule`).
//
// A linear warm-up over the first `warmup` steps, lr·(s + 1)/warmup for
// 0-based step s, then, with progress p = (s − warmup)/(steps − warmup)
// (at most 1) and floor = lr · min_lr_fraction:
//   cosine    floor + (lr − floor)·(1 + cos(π·p))/2  (the default)
//   linear    lr − (lr − floor)·p
//   constant  lr: what reproducing llm.c's fixed-rate runs needs
// as llm.c's train_gpt2 schedules them (its learning-rate scheduler).
#pragma once

#include <cstdint>
#include <string>

namespace axo {

enum class LrSchedule { cosine, linear, constant };

const char* to_string(LrSchedule schedule);
// Throws InputError naming the choices.
LrSchedule parse_lr_schedule(const std::string& text);

struct LrScheduleOptions {
  LrSchedule schedule = LrSchedule::cosine;
  double lr = 3e-4;              // the peak rate; 0 trains nothing (evaluation only)
  double min_lr_fraction = 0.1;  // cosine and linear decay to lr · this
  int64_t warmup = 0;            // steps of linear warm-up
  int64_t steps = 1;             // the run's length
};

// The rate of 0-based step s.
double learning_rate(const LrScheduleOptions& options, int64_t s);

}  // namespace axo
