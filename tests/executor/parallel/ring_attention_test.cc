// Ring attention over every rank of the launch against the serial causal
// attention (cpu::attention_forward/backward) on the whole sequence: each
// rank's output rows and its rows of dq, dk, dv equal the serial ones at the
// rank's global positions, to fp32 round-off (1e-5 of the largest value).
// axo-test-ranks: 2 3 4 8
#include "executor/parallel/ring_attention.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/cpu/ops.h"
#include "tests/executor/random_values.h"

namespace axo {
namespace {

constexpr int64_t kB = 2, kC = 16, kNH = 2;

// The largest |a − b| over the rank's rows against the serial rows at their positions, relative to the largest |serial|.
double worst_relative(const std::vector<float>& mine, const std::vector<float>& serial, const ContextChunks& chunks,
                      int64_t width) {
  double worst = 0, scale = 0;
  for (float v : serial) scale = std::max(scale, double(std::fabs(v)));
  const int64_t Tl = chunks.local_length(), T = chunks.sequence_length();
  for (int64_t b = 0; b < kB; ++b) {
    for (int64_t j = 0; j < Tl; ++j) {
      for (int64_t i = 0; i < width; ++i) {
        const float a = mine[size_t((b * Tl + j) * width + i)];
        const float s = serial[size_t((b * T + chunks.position(j)) * width + i)];
        worst = std::max(worst, double(std::fabs(a - s)));
      }
    }
  }
  return worst / scale;
}

// This rank's rows of a [B·T, width] array.
std::vector<float> rows_of(const std::vector<float>& full, const ContextChunks& chunks, int64_t width) {
  const int64_t Tl = chunks.local_length(), T = chunks.sequence_length();
  std::vector<float> mine(size_t(kB * Tl * width));
  for (int64_t b = 0; b < kB; ++b) {
    for (int64_t j = 0; j < Tl; ++j) {
      std::copy_n(full.begin() + (b * T + chunks.position(j)) * width, width, mine.begin() + (b * Tl + j) * width);
    }
  }
  return mine;
}

TEST(RingAttentionTest, EqualsTheSerialAttentionForwardAndBackward) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  const int64_t c = world.size();
  for (int64_t chunk : {1, 3}) {
    const int64_t T = 2 * c * chunk;
    SCOPED_TRACE("T = " + std::to_string(T));
    const std::vector<float> qkv = testing::random_values(size_t(kB * T * 3 * kC), 11);
    const std::vector<float> dout = testing::random_values(size_t(kB * T * kC), 12);
    std::vector<float> out(size_t(kB * T * kC)), att(size_t(kB * kNH * T * T)), scratch(att.size());
    std::vector<float> dqkv(qkv.size(), 0.0f);
    cpu::attention_forward(out.data(), att.data(), qkv.data(), kB, T, kC, kNH);
    cpu::attention_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), kB, T, kC, kNH);

    const ContextChunks chunks(c, world.rank(), T);
    PhaseTimes times;
    DeviceMemory memory;
    ContextRingAttention ring(world, times, memory);
    ring.set_shape(chunks, kB, kC, kNH);
    const std::vector<float> my_qkv = rows_of(qkv, chunks, 3 * kC), my_dout = rows_of(dout, chunks, kC);
    std::vector<float> my_out(my_dout.size()), lse(size_t(kB * kNH * chunks.local_length()));
    ring.forward(my_out.data(), lse.data(), my_qkv.data());
    EXPECT_LE(worst_relative(my_out, out, chunks, kC), 1e-5);
    std::vector<float> my_dqkv(my_qkv.size(), 0.0f);
    ring.backward(my_dqkv.data(), my_dout.data(), my_qkv.data(), my_out.data(), lse.data());
    EXPECT_LE(worst_relative(my_dqkv, dqkv, chunks, 3 * kC), 1e-5);
    EXPECT_GT(memory.peak_share(DeviceUse::comm_buffers), 0) << "the blocks in flight are booked";
    EXPECT_GT(times.ops.attention, 0.0);
  }
}

}  // namespace
}  // namespace axo
