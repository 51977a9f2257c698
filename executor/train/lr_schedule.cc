// Learning-rate schedules (see lr_schedule.h).
#include "executor/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "model/error.h"

namespace axo {

const char* to_string(LrSchedule schedule) {
  switch (schedule) {
    case LrSchedule::cosine: return "cosine";
    case LrSchedule::linear: return "linear";
    case LrSchedule::constant: return "constant";
  }
  return "?";
}

LrSchedule parse_lr_schedule(const std::string& text) {
  for (LrSchedule s : {LrSchedule::cosine, LrSchedule::linear, LrSchedule::constant}) {
    if (text == to_string(s)) return s;
  }
  throw InputError("--lr-schedule: expected cosine, linear or constant, got '" + text + "'");
}

double learning_rate(const LrScheduleOptions& o, int64_t s) {
  if (o.warmup > 0 && s < o.warmup) return o.lr * double(s + 1) / double(o.warmup);
  const double span = double(std::max<int64_t>(o.steps - o.warmup, 1));
  const double progress = std::min(1.0, double(s - o.warmup) / span);
  const double floor = o.lr * o.min_lr_fraction;
  switch (o.schedule) {
    case LrSchedule::cosine: return floor + 0.5 * (o.lr - floor) * (1.0 + std::cos(M_PI * progress));
    case LrSchedule::linear: return o.lr - (o.lr - floor) * progress;
    case LrSchedule::constant: return o.lr;
  }
  return o.lr;
}

}  // namespace axo
