// The pipeline schedules axo's executor runs (executor/parallel/pipeline_schedule.h): AxoNN's
// message-driven one, its default, and static 1F1B. Named once for `axo train --schedule`, the run
// file's `schedule` (run_schema.h) and the memory model, whose microbatches in flight differ by
// schedule (memory_model.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace axo {

enum class Schedule { message_driven, one_f_one_b };
inline constexpr std::array<Schedule, 2> kSchedules = {Schedule::message_driven, Schedule::one_f_one_b};
// "message-driven" or "1f1b"; InputError naming the text otherwise.
Schedule parse_schedule(const std::string& text);
const char* to_string(Schedule schedule);

// Static 1F1B's warm-up on stage s of p with v chunks over m microbatches: the chunk forwards it
// runs before its first backward, p − s − 1 (Narayanan et al. SC'21, PipeDream-Flush), interleaved
// 2(p − s − 1) + (v − 1)·p (§2.2; PyTorch's ScheduleInterleaved1F1B), at most the step's m·v. The
// executor runs it (pipeline_schedule.h) and the memory model counts what it holds
// (pipeline_in_flight.h).
int64_t one_f_one_b_warmup(int64_t p, int64_t v, int64_t m, int64_t s);

}  // namespace axo
