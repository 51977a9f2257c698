// The pipeline schedules driven by a fake stage that checks what it is
// given: every chunk runs every microbatch's forward and backward once, each
// on the right neighbour's data, each chunk in microbatch order; the number
// of chunk activations held stays within the schedule's bound
// (pipeline_schedule.h); 1F1B runs Megatron's (interleaved) order, written
// out here from Narayanan et al. SC'21 §2.2 (Fig. 4) for 2 stages.
// axo-test-ranks: 2 4
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/parallel/pipeline_schedule.h"
#include "model/error.h"

namespace axo {
namespace {

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

struct Event {
  char kind;  // 'F' or 'B'
  int64_t chunk, microbatch;
  bool operator==(const Event&) const = default;
};

std::string text(const std::vector<Event>& events) {
  std::string out;
  for (const Event& e : events) out += e.kind + std::to_string(e.chunk) + "." + std::to_string(e.microbatch) + " ";
  return out;
}

// Stage s of P with v chunks; its chunk c is the model's chunk k = c·P + s.
// Chunk k's output for microbatch mb carries value(k, mb), its input gradient −value(k, mb).
class FakeStage : public PipelineStage {
 public:
  FakeStage(int64_t P, int64_t v, int64_t s) : P_(P), v_(v), s_(s) {}
  static constexpr int64_t kBoundary = 3;
  static float value(int64_t k, int64_t mb) { return float(1000 * mb + k + 1); }

  int64_t boundary_size() const override { return kBoundary; }
  void forward(int64_t chunk, int64_t mb, const float* input, float* output) override {
    const int64_t k = model_chunk(chunk);
    expect_filled(input, k == 0, k == 0 ? 0 : value(k - 1, mb), "forward input", chunk, mb);
    EXPECT_EQ(output == nullptr, k == last()) << "chunk " << chunk;
    if (output) std::fill_n(output, kBoundary, value(k, mb));
    EXPECT_TRUE(held_.insert({chunk, mb}).second) << "a second forward of " << chunk << "." << mb;
    most_held_ = std::max(most_held_, int64_t(held_.size()));
    events_.push_back({'F', chunk, mb});
  }
  void backward(int64_t chunk, int64_t mb, const float* doutput, float* dinput) override {
    const int64_t k = model_chunk(chunk);
    expect_filled(doutput, k == last(), k == last() ? 0 : -value(k + 1, mb), "backward input", chunk, mb);
    EXPECT_EQ(dinput == nullptr, k == 0) << "chunk " << chunk;
    if (dinput) std::fill_n(dinput, kBoundary, -value(k, mb));
    EXPECT_EQ(held_.erase({chunk, mb}), 1u) << "a backward of " << chunk << "." << mb << " without its forward";
    events_.push_back({'B', chunk, mb});
  }
  void drop(int64_t chunk, int64_t mb) override { held_.erase({chunk, mb}); }

  const std::vector<Event>& events() const { return events_; }
  int64_t most_held() const { return most_held_; }
  int64_t held() const { return int64_t(held_.size()); }

 private:
  int64_t model_chunk(int64_t chunk) const { return chunk * P_ + s_; }
  int64_t last() const { return P_ * v_ - 1; }
  static void expect_filled(const float* data, bool null, float expected, const char* what, int64_t chunk,
                            int64_t mb) {
    ASSERT_EQ(data == nullptr, null) << what << " of " << chunk << "." << mb;
    for (int64_t i = 0; data && i < kBoundary; ++i) EXPECT_EQ(data[i], expected) << what << " of " << chunk << "." << mb;
  }
  int64_t P_, v_, s_;
  std::set<std::pair<int64_t, int64_t>> held_;
  int64_t most_held_ = 0;
  std::vector<Event> events_;
};

ParallelConfig pipeline_of(int64_t P, int64_t v) {
  ParallelConfig config;
  config.pipeline = P, config.interleave = v, config.data = world_size() / P;
  return config;
}

struct Outcome {
  std::vector<Event> events;
  int64_t most_held = 0, held_after = 0, buffers_after = 0, buffers_peak = 0;
};

Outcome run(const ParallelConfig& config, int64_t M, const ScheduleOptions& options) {
  MpiCommunicator world(MPI_COMM_WORLD);
  ProcessGrid grid(world, config);
  FakeStage stage(config.pipeline, config.interleave, grid.coords().pipeline);
  PhaseTimes times;
  DeviceMemory memory(0);
  run_pipeline(stage, grid, M, options, times, memory);
  return {stage.events(), stage.most_held(), stage.held(), memory.in_use(DeviceUse::comm_buffers), memory.peak()};
}

// Each (chunk, microbatch) once forward, then once backward; each chunk's in microbatch order.
void expect_complete(const std::vector<Event>& events, int64_t v, int64_t M) {
  for (char kind : {'F', 'B'}) {
    for (int64_t c = 0; c < v; ++c) {
      std::vector<int64_t> order;
      for (const Event& e : events) {
        if (e.kind == kind && e.chunk == c) order.push_back(e.microbatch);
      }
      std::vector<int64_t> expected;
      for (int64_t mb = 0; mb < M; ++mb) expected.push_back(mb);
      EXPECT_EQ(order, expected) << kind << " of chunk " << c << ": " << text(events);
    }
  }
}

// The most chunk activations stage s may hold (pipeline_schedule.h).
int64_t bound(Schedule schedule, int64_t P, int64_t v, int64_t s, int64_t M) {
  // At most P microbatches in flight; the model's last chunk runs each backward right after its forward.
  if (schedule == Schedule::message_driven) return std::min(P, M) * (s == P - 1 ? v - 1 : v) + (s == P - 1 ? 1 : 0);
  const int64_t warmup = v > 1 ? 2 * (P - s - 1) + (v - 1) * P : P - s - 1;
  return std::min(warmup + 1, M * v);
}

TEST(PipelineScheduleTest, EveryChunkRunsEveryMicrobatchOnceWithinTheMemoryBound) {
  const int64_t P = world_size();
  for (Schedule schedule : {Schedule::message_driven, Schedule::one_f_one_b}) {
    for (int64_t v : {1, 2, 3}) {
      for (int64_t M : {P, 2 * P, 3 * P + 1}) {
        if (schedule == Schedule::one_f_one_b && v > 1 && M % P != 0) continue;
        for (int64_t delayed : {int64_t(-1), int64_t(0), P - 1}) {
          SCOPED_TRACE(std::string(to_string(schedule)) + ", interleave " + std::to_string(v) + ", " +
                       std::to_string(M) + " microbatches, stage " + std::to_string(delayed) + " delayed");
          ScheduleOptions options;
          options.schedule = schedule, options.delayed_stage = delayed, options.delay_s = 0.0005;
          options.jitter_s = 0.001;
          const ParallelConfig config = pipeline_of(P, v);
          const Outcome r = run(config, M, options);
          expect_complete(r.events, v, M);
          const int64_t s = grid_coords(config, world_rank()).pipeline;
          EXPECT_LE(r.most_held, bound(schedule, P, v, s, M)) << "stage " << s;
          EXPECT_EQ(r.held_after, 0);
          EXPECT_EQ(r.buffers_after, 0) << "communication buffers left booked";
          EXPECT_GT(r.buffers_peak, 0);
        }
      }
    }
  }
}

TEST(PipelineScheduleTest, OneFOneBRunsMegatronsOrder) {
  if (world_size() % 2 != 0) GTEST_SKIP() << "two stages";
  auto parse = [](const std::string& order) {
    std::vector<Event> events;
    for (size_t i = 0; i < order.size(); i += 5) {
      events.push_back({order[i], int64_t(order[i + 1] - '0'), int64_t(order[i + 3] - '0')});
    }
    return events;
  };
  ScheduleOptions options;
  options.schedule = Schedule::one_f_one_b;
  const int64_t s = grid_coords(pipeline_of(2, 1), world_rank()).pipeline;
  // Without interleaving: one warmup forward on stage 0, none on stage 1.
  const std::string plain[2] = {"F0.0 F0.1 B0.0 F0.2 B0.1 F0.3 B0.2 B0.3 ", "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 F0.3 B0.3 "};
  EXPECT_EQ(text(run(pipeline_of(2, 1), 4, options).events), text(parse(plain[s])));
  // Two chunks: warmups of 2·(P − s − 1) + (v − 1)·P = 4 and 2 forwards,
  // chunks taken in groups of P microbatches.
  const std::string interleaved[2] = {
      "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3 ",
      "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3 "};
  EXPECT_EQ(text(run(pipeline_of(2, 2), 4, options).events), text(parse(interleaved[s])));
  // As many microbatches as stages: the first stage's warm-up is every forward, the last's its first
  // chunk's (Megatron-Core would run every forward first on both).
  const std::string as_many_as_stages[2] = {"F0.0 F0.1 F1.0 F1.1 B1.0 B1.1 B0.0 B0.1 ",
                                            "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 B0.0 B0.1 "};
  EXPECT_EQ(text(run(pipeline_of(2, 2), 2, options).events), as_many_as_stages[s]);
}

// Under zero 2 with interleaved chunks each backward starts reduce-scatters over the data ranks, so
// every replica's stage must run its forwards and backwards in one order: the stage's first rank
// chooses for all. Each replica here delays another stage at random (its own seed), which without
// the agreement gave the replicas different orders.
TEST(PipelineScheduleTest, UnderZeroTwoWithInterleavedChunksEveryReplicaRunsOneOrder) {
  if (world_size() < 4 || world_size() % 2 != 0) GTEST_SKIP() << "two replicas of two or more stages";
  ParallelConfig config = pipeline_of(world_size() / 2, 2);
  config.zero = 2;
  const GridCoords at = grid_coords(config, world_rank());
  ScheduleOptions options;
  options.delayed_stage = at.data % config.pipeline, options.delay_s = 0.002, options.jitter_s = 0.004;
  options.seed += uint64_t(at.data);
  const int64_t M = 3 * config.pipeline;
  const std::vector<Event> events = run(config, M, options).events;
  expect_complete(events, config.interleave, M);
  // Every rank's events, encoded, gathered to compare with the other replica's same stage.
  std::vector<int> mine;
  for (const Event& e : events) mine.push_back(int((e.kind == 'F' ? 1 : -1) * (1000 * e.chunk + e.microbatch + 1)));
  std::vector<int> all(mine.size() * size_t(world_size()));
  MPI_Allgather(mine.data(), int(mine.size()), MPI_INT, all.data(), int(mine.size()), MPI_INT, MPI_COMM_WORLD);
  for (int rank = 0; rank < world_size(); ++rank) {
    if (grid_coords(config, rank).pipeline != at.pipeline) continue;
    const std::vector<int> theirs(all.begin() + std::ptrdiff_t(rank * mine.size()),
                                  all.begin() + std::ptrdiff_t((rank + 1) * mine.size()));
    EXPECT_EQ(theirs, mine) << "stage " << at.pipeline << ": rank " << rank << " against rank " << world_rank();
  }
}

TEST(PipelineScheduleTest, InterleavedOneFOneBNeedsMicrobatchesAMultipleOfTheStages) {
  const int64_t P = world_size();
  ScheduleOptions options;
  options.schedule = Schedule::one_f_one_b;
  try {
    run(pipeline_of(P, 2), P + 1, options);
    FAIL() << "ran interleaved 1F1B on " << P + 1 << " microbatches over " << P << " stages";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline = " + std::to_string(P) + " does not divide the step's " +
                                         std::to_string(P + 1) + " microbatches"),
              std::string::npos)
        << e.what();
  }
}

TEST(PipelineScheduleTest, ForwardOnlyRunsEveryChunkInOrderAndKeepsNothing) {
  const int64_t P = world_size();
  for (int64_t v : {1, 3}) {
    MpiCommunicator world(MPI_COMM_WORLD);
    const ParallelConfig config = pipeline_of(P, v);
    ProcessGrid grid(world, config);
    FakeStage stage(P, v, grid.coords().pipeline);
    PhaseTimes times;
    DeviceMemory memory(0);
    run_forward_only(stage, grid, 5, times, memory);
    std::vector<Event> expected;
    for (int64_t mb = 0; mb < 5; ++mb) {
      for (int64_t c = 0; c < v; ++c) expected.push_back({'F', c, mb});
    }
    EXPECT_EQ(text(stage.events()), text(expected));
    EXPECT_EQ(stage.held(), 0);
  }
}

}  // namespace
}  // namespace axo
