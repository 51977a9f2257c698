// LayerNorm over rows whose C channels are split over a group (the X group:
// the residual stream is [m, C/Gx] on each rank). The row statistics need
// the whole row, so forward all-reduces per-row sums of x and of (x − μ)²,
// and backward the per-row sums of g and g·x̂ (see cpu::layernorm_backward);
// 2 or 1 values per row, small beside the linear layers' traffic. With a
// group of one rank this is cpu::layernorm_* exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/comm/communicator.h"
#include "executor/memory/device_memory.h"
#include "executor/parallel/phase_times.h"

namespace axo {

class ShardedLayerNorm {
 public:
  // The row sums' buffer is booked in `memory` as a communication buffer.
  ShardedLayerNorm(Communicator& group, int64_t channels, PhaseTimes& times, DeviceMemory& memory)
      : group_(group), channels_(channels), times_(times), sums_({memory, DeviceUse::comm_buffers}) {}
  // out, in: [N, C_local]; mean, rstd: [N].
  void forward(float* out, float* mean, float* rstd, const float* in, const float* weight, const float* bias,
               int64_t N, int64_t C_local);
  // Accumulates into din, dweight, dbias.
  void backward(float* din, float* dweight, float* dbias, const float* dout, const float* in, const float* weight,
                const float* mean, const float* rstd, int64_t N, int64_t C_local);

 private:
  Communicator& group_;
  int64_t channels_;
  PhaseTimes& times_;
  DeviceFloats sums_;
};

}  // namespace axo
