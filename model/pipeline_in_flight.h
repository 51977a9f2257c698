// The activations a pipeline stage holds at its peak, chunk by chunk, by schedule. With p stages,
// m microbatches and a stage's v chunks (stage_partition.h), `chunk_bytes[k]` what one microbatch
// of its chunk k keeps for its backward:
//   1F1B (PipeDream-Flush, Narayanan et al. SC'21): stage s holds min(m, p − s) microbatches;
//   interleaved 1F1B: a warm-up of W = min(2(p − s − 1) + (v − 1)·p, m·v) chunk forwards, then one
//     forward and one backward each step; the k-th forward runs chunk ⌊(k mod p·v)/p⌋, the k-th
//     backward chunk v − 1 − ⌊(k mod p·v)/p⌋ (executor/parallel/pipeline_schedule.h, PyTorch's
//     ScheduleInterleaved1F1B, Megatron-Core's forward_backward_pipelining_with_interleaving). The
//     peak is the most those forwards hold at once: W + 1 chunks where they are equal, more of the
//     larger where they are not. With m = p Megatron-Core runs every forward first
//     (all_warmup_microbatches): every microbatch of every chunk;
//   axo's message-driven schedule keeps at most p microbatches in flight, each in every chunk but
//     the model's last, whose backward follows its forward: min(m, p) of each chunk, one of the last
//     stage's last (pipeline_schedule.h);
//   one stage runs each microbatch through its chunks and back: one of each.
// Where a chunk's bytes are a·layers + b (the same a and b for each chunk: every layer kept alike),
// the peak is a·L + b·N for the layers L and chunks N held_chunks gives: after the warm-up each
// step holds W + 1 chunks, so the step that holds the most layers holds the most bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "model/schedule.h"
#include "model/stage_partition.h"

namespace axo {

struct PipelineHold {
  Schedule schedule = Schedule::one_f_one_b;
  bool all_forwards_first_at_m_equal_p = false;  // Megatron-Core's interleaved 1F1B
};

// Bytes stage `stage` of `stages` holds at its peak over `microbatches` microbatches.
double held_activation_bytes(const std::vector<double>& chunk_bytes, int64_t stages, int64_t microbatches,
                             int64_t stage, const PipelineHold& hold);

// The layers and chunks of microbatches stage `stage` holds at its peak, its chunks of
// `chunk_layers` layers each.
struct HeldChunks {
  double layers = 0, chunks = 0;
};
HeldChunks held_chunks(const std::vector<int64_t>& chunk_layers, int64_t stages, int64_t microbatches, int64_t stage,
                       const PipelineHold& hold);

// Stage by stage of `split`: what its chunks hold at the peak (held_chunks) and their fewest and
// most layers (whether a partial recompute keeps each chunk alike).
struct StageHold {
  HeldChunks held;
  int64_t fewest_layers = 0, most_layers = 0;
};
std::vector<StageHold> stage_holds(const PipelineSplit& split, int64_t microbatches, const PipelineHold& hold);

}  // namespace axo
