// A stage's activations at its peak: interleaved 1F1B's against a step-by-step walk of its order
// (pipeline_in_flight.h), on equal and unequal chunks; 1F1B's p − s; the message-driven bound;
// Megatron-Core's every-forward-first where m = p.
#include "model/pipeline_in_flight.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace axo {
namespace {

// Every forward and backward of interleaved 1F1B on stage s in order, the held bytes after each forward.
double walked_peak(const std::vector<double>& bytes, int64_t p, int64_t m, int64_t s) {
  const int64_t v = int64_t(bytes.size()), steps = m * v;
  const int64_t warmup = std::min(2 * (p - s - 1) + (v - 1) * p, steps);
  auto forward_chunk = [&](int64_t k) { return size_t(k % (p * v) / p); };
  auto backward_chunk = [&](int64_t k) { return size_t(v - 1 - k % (p * v) / p); };
  double held = 0, peak = 0;
  int64_t backwards = 0;
  for (int64_t k = 0; k < steps; ++k) {
    held += bytes[forward_chunk(k)];
    peak = std::max(peak, held);
    if (k >= warmup) held -= bytes[backward_chunk(backwards++)];
  }
  return peak;
}

TEST(PipelineInFlight, InterleavedOneFOneBIsItsOrdersPeak) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> layers(1, 4);
  for (int64_t p : {2, 3, 4, 8}) {
    for (int64_t v : {2, 3, 5}) {
      for (int64_t m : {p, 2 * p, 5 * p}) {
        std::vector<double> bytes;
        for (int64_t k = 0; k < v; ++k) bytes.push_back(1000.0 * layers(random) + 7);
        for (int64_t s = 0; s < p; ++s) {
          SCOPED_TRACE("p " + std::to_string(p) + ", v " + std::to_string(v) + ", m " + std::to_string(m) +
                       ", stage " + std::to_string(s));
          EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, p, m, s, {}), walked_peak(bytes, p, m, s));
        }
      }
    }
  }
}

// Where each chunk keeps a·layers + b bytes, the peak is a·L + b·N for held_chunks' L and N, under
// every schedule: the step that holds the most layers holds the most bytes.
TEST(PipelineInFlight, HeldChunksGiveThePeakOfBytesAffineInTheLayers) {
  std::mt19937 random(11);
  std::uniform_int_distribution<int> layers(1, 5);
  const PipelineHold holds[] = {{}, {Schedule::one_f_one_b, true}, {Schedule::message_driven, false}};
  for (const PipelineHold& hold : holds) {
    for (int64_t p : {2, 4, 8}) {
      for (int64_t v : {1, 2, 3}) {
        for (int64_t m : {p, 3 * p}) {
          std::vector<int64_t> chunk_layers;
          std::vector<double> bytes;
          for (int64_t k = 0; k < v; ++k) {
            chunk_layers.push_back(layers(random));
            bytes.push_back(3.0 * double(chunk_layers.back()) + 5);
          }
          for (int64_t s = 0; s < p; ++s) {
            const HeldChunks held = held_chunks(chunk_layers, p, m, s, hold);
            EXPECT_DOUBLE_EQ(3.0 * held.layers + 5 * held.chunks, held_activation_bytes(bytes, p, m, s, hold))
                << "p " << p << ", v " << v << ", m " << m << ", stage " << s;
          }
        }
      }
    }
  }
}

// Equal chunks: the warm-up's W forwards and one more, W = 2(p − s − 1) + (v − 1)·p, at most m·v.
TEST(PipelineInFlight, EqualChunksHoldTheWarmUpAndOneMore) {
  const std::vector<double> bytes(3, 10.0);
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 8, 0, {}), 10.0 * (6 + 8 + 1));
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 8, 3, {}), 10.0 * (8 + 1));
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 4, 0, {}), 10.0 * 12);  // capped at m·v
}

TEST(PipelineInFlight, OneFOneBHoldsPMinusSMicrobatches) {
  for (int64_t s = 0; s < 4; ++s) EXPECT_DOUBLE_EQ(held_activation_bytes({5.0}, 4, 16, s, {}), 5.0 * double(4 - s));
  EXPECT_DOUBLE_EQ(held_activation_bytes({5.0}, 4, 2, 0, {}), 10.0);  // m < p
}

TEST(PipelineInFlight, MessageDrivenHoldsPOfEachChunkButTheModelsLast) {
  const PipelineHold message_driven{Schedule::message_driven, false};
  const std::vector<double> bytes = {3.0, 2.0};
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 16, 1, message_driven), 4 * 5.0);
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 16, 3, message_driven), 4 * 3.0 + 2.0);
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 2, 0, message_driven), 2 * 5.0);  // m < p
  EXPECT_DOUBLE_EQ(held_activation_bytes({5.0}, 4, 16, 3, message_driven), 5.0);
}

// One stage holds one microbatch of each chunk, whatever the schedule (a walk of interleaved 1F1B's
// order would run the next microbatch's first chunk before the last one's backward).
TEST(PipelineInFlight, OneStageHoldsOneMicrobatchOfEachChunk) {
  const std::vector<double> bytes = {2.0, 1.0};
  for (const PipelineHold& hold : {PipelineHold{}, PipelineHold{Schedule::message_driven, false}}) {
    EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 1, 4, 0, hold), 3.0);
    EXPECT_DOUBLE_EQ(held_chunks({2, 1}, 1, 4, 0, hold).layers, 3.0);
    EXPECT_DOUBLE_EQ(held_chunks({2, 1}, 1, 4, 0, hold).chunks, 2.0);
  }
}

TEST(PipelineInFlight, MegatronCoreRunsEveryForwardFirstWhereMEqualsP) {
  const PipelineHold megatron{Schedule::one_f_one_b, true};
  const std::vector<double> bytes = {3.0, 2.0};
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 4, 3, megatron), 4 * 5.0);
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 4, 3, {}), walked_peak(bytes, 4, 4, 3));
  EXPECT_LT(held_activation_bytes(bytes, 4, 4, 3, {}), 4 * 5.0);
  EXPECT_DOUBLE_EQ(held_activation_bytes(bytes, 4, 8, 3, megatron), held_activation_bytes(bytes, 4, 8, 3, {}));
}

}  // namespace
}  // namespace axo
