// The pipeline schedules axo's executor runs (executor/parallel/pipeline_schedule.h): AxoNN's
// message-driven one, its default, and static 1F1B. Named once for `axo train --schedule`, the run
// file's `schedule` (run_schema.h) and the memory model, whose microbatches in flight differ by
// schedule (memory_model.h).
#pragma once

#include <array>
#include <string>

namespace axo {

enum class Schedule { message_driven, one_f_one_b };
inline constexpr std::array<Schedule, 2> kSchedules = {Schedule::message_driven, Schedule::one_f_one_b};
// "message-driven" or "1f1b"; InputError naming the text otherwise.
Schedule parse_schedule(const std::string& text);
const char* to_string(Schedule schedule);

}  // namespace axo
