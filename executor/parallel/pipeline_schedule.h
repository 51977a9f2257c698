// Running a step's microbatches through the pipeline stages: AxoNN's
// message-driven schedule, or a static 1F1B schedule to compare it with
// (ARCHITECTURE.md, "The message-driven pipeline").
//
// With interleave v (virtual stages) each of the P stages holds v chunks of
// layers: its chunk c is the model's chunk c·P + s (stage_partition.h), so a
// microbatch goes through stages 0, 1, …, P−1, back to stage 0 for its next
// chunk, and so on; its gradient comes back the same way. The model's first
// chunk (stage 0's chunk 0) takes no input; its last (stage P−1's chunk v−1)
// computes the loss and starts the backward.
//
// Message-driven: each stage keeps one receive posted per stream (a
// direction and one of its chunks) that has microbatches to come, tagged by
// direction, chunk and microbatch, and runs whichever completes first
// (MPI_Waitany): a forward of any chunk, or a backward of any chunk. The
// model's last chunk runs each microbatch's backward right after its
// forward. The first stage injects P microbatches, then one more each time a
// microbatch's backward leaves the model's first chunk, so at most P
// microbatches are in flight: a stage holds at most P·v chunk activations
// (the last stage P·(v − 1) + 1), within interleaved 1F1B's first-stage
// bound (v−1)·P + 2(P−1) + 1 (P without interleaving, where 1F1B holds
// P − s on stage s: a middle stage may hold more). Sends are non-blocking;
// each one that has completed gives its buffer back before the next forward
// or backward (model/axo_buffers.h books the posted receives and two sends).
// The ranks of one stage's tensor group follow the order their group's first
// rank sees, so their collectives match; under zero 2 with interleaved chunks
// so do the stage's ranks on every replica (ProcessGrid::stage), so the
// reduce-scatters each backward starts over the data ranks match too (one
// broadcast of the choice per forward or backward served; a replica whose
// messages come in another order waits for the first rank's).
//
// 1F1B (Narayanan et al. SC'21, PipeDream-Flush; interleaved per §2.2, as
// Megatron-LM runs it): stage s runs a warmup of forwards, P − s − 1
// without interleaving or 2·(P − s − 1) + (v − 1)·P with it (at most M·v,
// as PyTorch's ScheduleInterleaved1F1B warms up; Megatron-Core's runs every
// forward first where M = P), then alternates one forward and one backward,
// then drains the remaining backwards, with blocking receives. Its k-th forward runs chunk
// ⌊(k mod P·v)/P⌋ on microbatch ⌊k/(P·v)⌋·P + k mod P, its k-th backward
// the same microbatch on chunk v − 1 − ⌊(k mod P·v)/P⌋; interleaved, it needs
// the microbatches to be a multiple of P. Stage s then holds at most
// warmup + 1 chunk activations.
#pragma once

#include <cstdint>
#include <string>

#include "executor/memory/device_memory.h"
#include "executor/parallel/phase_times.h"
#include "executor/parallel/process_grid.h"
#include "model/schedule.h"

namespace axo {

// One stage's work per chunk and microbatch; `chunk` is the stage's own
// (0 ≤ chunk < interleave). Each chunk's forwards, and its backwards, come
// in microbatch order.
class PipelineStage {
 public:
  virtual ~PipelineStage() = default;
  // Elements of one microbatch's activation (and of its gradient) between chunks.
  virtual int64_t boundary_size() const = 0;
  // input: from the model's previous chunk (null on its first); output: for the next (null on its last).
  virtual void forward(int64_t chunk, int64_t microbatch, const float* input, float* output) = 0;
  // doutput: from the model's next chunk (null on its last); dinput: for the previous (null on its first).
  virtual void backward(int64_t chunk, int64_t microbatch, const float* doutput, float* dinput) = 0;
  // Forgets a forward that will have no backward (evaluation).
  virtual void drop(int64_t chunk, int64_t microbatch) = 0;
};

struct ScheduleOptions {
  Schedule schedule = Schedule::message_driven;
  // Testing and benchmarking: stage `delayed_stage` sleeps delay_s plus a
  // uniform [0, jitter_s) before each forward.
  int64_t delayed_stage = -1;
  double delay_s = 0, jitter_s = 0;
  uint64_t seed = 1;
};

// Forward and backward of `microbatches` microbatches through the stage's
// grid.config().interleave chunks; seconds go to `times` (waiting for a
// neighbour: bubble; sends: pp_comm). The boundary activations and
// gradients in flight are booked in `memory` as communication buffers.
// InputError when interleaved 1F1B gets microbatches that P does not divide.
void run_pipeline(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, const ScheduleOptions& options,
                  PhaseTimes& times, DeviceMemory& memory);
// Forward only, in order (evaluation).
void run_forward_only(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, PhaseTimes& times,
                      DeviceMemory& memory);

}  // namespace axo
