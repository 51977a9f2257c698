// Pipeline schedule names (see schedule.h).
#include "model/schedule.h"

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

}  // namespace axo
