// Pipeline schedule names (see schedule.h).
#include "model/schedule.h"

#include <algorithm>

#include "model/error.h"

namespace axo {

Schedule parse_schedule(const std::string& text) {
  for (Schedule schedule : kSchedules) {
    if (text == to_string(schedule)) return schedule;
  }
  throw InputError("expected message-driven or 1f1b, got '" + text + "'");
}

const char* to_string(Schedule schedule) {
  return schedule == Schedule::message_driven ? "message-driven" : "1f1b";
}

int64_t one_f_one_b_warmup(int64_t p, int64_t v, int64_t m, int64_t s) {
  return std::min(v > 1 ? 2 * (p - s - 1) + (v - 1) * p : p - s - 1, m * v);
}

}  // namespace axo
