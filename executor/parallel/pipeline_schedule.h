// Running a step's microbatches through the pipeline stages: AxoNN's
// message-driven schedule, or a static 1F1B schedule to compare it with
// (ARCHITECTURE.md, "The message-driven pipeline").
//
// Message-driven: each stage keeps one receive posted per direction
// (activations from the previous stage, gradients from the next), tagged by
// microbatch, and runs whichever completes first (MPI_Waitany). The first
// stage injects Gpipe microbatches, then one more per completed backward;
// the last runs each microbatch's backward right after its forward. Sends
// are non-blocking and retired when done. The ranks of one stage's tensor
// group follow the order their group's first rank sees, so their
// collectives match.
//
// 1F1B: stage s runs min(Gpipe − s − 1, M) forwards, then alternates one
// forward and one backward, then drains the remaining backwards, with
// blocking receives (Narayanan et al. SC'21, PipeDream-Flush).
#pragma once

#include <cstdint>
#include <string>

#include "executor/memory/device_memory.h"
#include "executor/parallel/phase_times.h"
#include "executor/parallel/process_grid.h"

namespace axo {

// One stage's work per microbatch. Backwards come in microbatch order.
class PipelineStage {
 public:
  virtual ~PipelineStage() = default;
  // Elements of one microbatch's activation (and of its gradient) between stages.
  virtual int64_t boundary_size() const = 0;
  // input: from the previous stage (null on the first); output: for the next (null on the last).
  virtual void forward(int64_t microbatch, const float* input, float* output) = 0;
  // doutput: from the next stage (null on the last); dinput: for the previous (null on the first).
  virtual void backward(int64_t microbatch, const float* doutput, float* dinput) = 0;
  // Forgets a forward that will have no backward (evaluation).
  virtual void drop(int64_t microbatch) = 0;
};

enum class Schedule { message_driven, one_f_one_b };
// "message-driven" or "1f1b"; InputError otherwise.
Schedule parse_schedule(const std::string& text);
const char* to_string(Schedule schedule);

struct ScheduleOptions {
  Schedule schedule = Schedule::message_driven;
  // Testing and benchmarking: stage `delayed_stage` sleeps delay_s plus a
  // uniform [0, jitter_s) before each forward.
  int64_t delayed_stage = -1;
  double delay_s = 0, jitter_s = 0;
  uint64_t seed = 1;
};

// Forward and backward of `microbatches` microbatches; seconds go to `times`
// (waiting for a neighbour: bubble; sends: pp_comm). The boundary
// activations and gradients in flight are booked in `memory` as
// communication buffers.
void run_pipeline(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, const ScheduleOptions& options,
                  PhaseTimes& times, DeviceMemory& memory);
// Forward only, in order (evaluation).
void run_forward_only(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, PhaseTimes& times,
                      DeviceMemory& memory);

}  // namespace axo
