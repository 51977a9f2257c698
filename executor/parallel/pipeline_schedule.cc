// Message-driven and 1F1B pipeline schedules (see pipeline_schedule.h).
#include "executor/parallel/pipeline_schedule.h"

#include <chrono>
#include <deque>
#include <random>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/timer.h"
#include "model/error.h"

namespace axo {

namespace {

enum Direction { kForward = 0, kBackward = 1 };

// Where the model's chunks sit: stage s's chunk c is the model's chunk c·P + s.
struct ChunkPlace {
  int stage;
  int64_t chunk;
};

// MPI guarantees tags up to at least 32767 (MPI_TAG_UB). A tag names the
// receiver's stream (direction and chunk) and the microbatch modulo what
// fits; the messages of one stream arrive in microbatch order, so a wrapped
// tag is never ambiguous.
int tag_of(Direction direction, int64_t chunk, int64_t microbatch, int64_t interleave) {
  const int64_t streams = 2 * interleave;
  return int(microbatch % (32768 / streams) * streams + chunk * 2 + direction);
}

// One step's traffic with the neighbouring stages.
class StageLink {
 public:
  StageLink(PipelineStage& stage, const ProcessGrid& grid, const ScheduleOptions& options, PhaseTimes& times,
            DeviceMemory& memory)
      : stage_(stage),
        buffers_(memory, DeviceUse::comm_buffers),
        pipe_(grid.pipeline()),
        s_(grid.coords().pipeline),
        P_(int(grid.config().pipeline)),
        v_(grid.config().interleave),
        n_(size_t(stage.boundary_size())),
        options_(options),
        times_(times),
        rng_(options.seed + uint64_t(s_)) {}

  int stage() const { return s_; }
  int64_t stages() const { return P_; }
  int64_t interleave() const { return v_; }
  bool model_first(int64_t chunk) const { return s_ == 0 && chunk == 0; }
  bool model_last(int64_t chunk) const { return s_ == P_ - 1 && chunk == v_ - 1; }
  ChunkPlace next(int64_t chunk) const { return s_ + 1 < P_ ? ChunkPlace{s_ + 1, chunk} : ChunkPlace{0, chunk + 1}; }
  ChunkPlace previous(int64_t chunk) const { return s_ > 0 ? ChunkPlace{s_ - 1, chunk} : ChunkPlace{P_ - 1, chunk - 1}; }

  DeviceFloats buffer(size_t size = 0) const { return DeviceFloats(size, 0.0f, buffers_); }
  // The receive of `chunk`'s input (forward) or output gradient (backward) for `microbatch`.
  RequestPtr post_receive(Direction direction, int64_t chunk, int64_t microbatch, DeviceFloats& buffer) {
    buffer.resize(n_);
    const int peer = direction == kForward ? previous(chunk).stage : next(chunk).stage;
    RequestPtr r;
    timed(times_.pp_comm, [&] { r = pipe_.start_recv(buffer.data(), n_, peer, tag_of(direction, chunk, microbatch, v_)); });
    return r;
  }
  void wait(Request& request) {
    timed(times_.bubble, [&] { request.wait(); });
  }
  void wait_any(const std::vector<Request*>& posted, size_t& chosen) {
    timed(times_.bubble, [&] { chosen = axo::wait_any(posted); });
  }
  // Everyone in `group` takes its first rank's `choice`.
  void agree(Communicator& group, float& choice) {
    timed(times_.bubble, [&] { group.broadcast(&choice, 1, 0); });
  }

  // Forward of `chunk` on `microbatch` from `input`, sending the result to the model's next chunk.
  void forward(int64_t chunk, int64_t microbatch, const float* input) {
    delay();
    retire_sent();
    DeviceFloats output = buffer(model_last(chunk) ? 0 : n_);
    stage_.forward(chunk, microbatch, input, model_last(chunk) ? nullptr : output.data());
    if (!model_last(chunk)) send(std::move(output), kForward, next(chunk), microbatch);
  }
  void backward(int64_t chunk, int64_t microbatch, const float* doutput) {
    retire_sent();
    DeviceFloats dinput = buffer(model_first(chunk) ? 0 : n_);
    stage_.backward(chunk, microbatch, doutput, model_first(chunk) ? nullptr : dinput.data());
    if (!model_first(chunk)) send(std::move(dinput), kBackward, previous(chunk), microbatch);
  }
  // The last sends complete when the neighbour takes them: waiting for it is idle time.
  void finish_sends() {
    timed(times_.bubble, [&] {
      for (Pending& p : sends_) p.request->wait();
      sends_.clear();
    });
  }
  void delay() {
    if (s_ != options_.delayed_stage) return;
    double seconds = options_.delay_s;
    if (options_.jitter_s > 0) seconds += std::uniform_real_distribution<double>(0, options_.jitter_s)(rng_);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }

 private:
  struct Pending {
    DeviceFloats buffer;
    RequestPtr request;
  };
  void send(DeviceFloats data, Direction direction, ChunkPlace to, int64_t microbatch) {
    timed(times_.pp_comm, [&] {
      Pending p{std::move(data), nullptr};
      p.request = pipe_.start_send(p.buffer.data(), n_, to.stage, tag_of(direction, to.chunk, microbatch, v_));
      sends_.push_back(std::move(p));
    });
  }
  // Gives back the buffers of every send that has completed, wherever it is in the queue.
  void retire_sent() {
    timed(times_.pp_comm, [&] {
      std::erase_if(sends_, [](Pending& p) { return p.request->test(); });
    });
  }

  PipelineStage& stage_;
  DeviceAllocator<float> buffers_;
  Communicator& pipe_;
  int s_, P_;
  int64_t v_;
  size_t n_;
  const ScheduleOptions& options_;
  PhaseTimes& times_;
  std::mt19937_64 rng_;
  std::deque<Pending> sends_;
};

// One direction of one chunk's traffic: its next microbatch and the receive posted for it.
struct Stream {
  Direction direction;
  int64_t chunk;
  int64_t next = 0;
  DeviceFloats buffer;
  RequestPtr receive;
};

// The streams a stage receives: backwards first (they free memory and let
// the first stage inject), then forwards.
std::vector<Stream> open_streams(StageLink& link, int64_t M) {
  std::vector<Stream> streams;
  for (int64_t c = link.interleave(); c-- > 0;) {
    if (!link.model_last(c)) streams.push_back({kBackward, c, 0, link.buffer(), nullptr});
  }
  for (int64_t c = 0; c < link.interleave(); ++c) {
    if (!link.model_first(c)) streams.push_back({kForward, c, 0, link.buffer(), nullptr});
  }
  for (Stream& s : streams) {
    if (M > 0) s.receive = link.post_receive(s.direction, s.chunk, 0, s.buffer);
  }
  return streams;
}

// Which posted receive to serve; the group follows its first rank's choice.
size_t choose(StageLink& link, Communicator& group, const std::vector<Request*>& posted) {
  size_t chosen = 0;
  if (posted.size() == 1) {
    link.wait(*posted[0]);
  } else if (group.size() == 1) {
    link.wait_any(posted, chosen);
  } else {
    float choice = 0;
    if (group.rank() == 0) {
      link.wait_any(posted, chosen);
      choice = float(chosen);
    }
    link.agree(group, choice);
    chosen = size_t(choice);
    if (group.rank() != 0) link.wait(*posted[chosen]);
  }
  return chosen;
}

// Who agrees on a stage's order: its tensor group; under zero 2 with interleaved chunks every
// replica's stage too, whose backwards start each microbatch's reduce-scatters over the data ranks
// (zero_optimizer.h), so every replica must issue them in one order.
Communicator& agreeing_group(const ProcessGrid& grid) {
  const ParallelConfig& c = grid.config();
  return c.zero >= 2 && c.interleave > 1 ? grid.stage() : grid.tensor();
}

void run_message_driven(StageLink& link, const ProcessGrid& grid, int64_t M) {
  const int64_t P = link.stages();
  std::vector<Stream> streams = open_streams(link, M);
  int64_t backwards_left = M * link.interleave(), injected = 0, finished = 0;
  // The first stage keeps P microbatches in flight (see the header).
  auto inject = [&] {
    if (link.stage() != 0) return;
    for (; injected < M && injected - finished < P; ++injected) link.forward(0, injected, nullptr);
  };
  inject();
  while (backwards_left > 0) {
    std::vector<Request*> posted;
    std::vector<Stream*> owners;
    for (Stream& s : streams) {
      if (s.receive) posted.push_back(s.receive.get()), owners.push_back(&s);
    }
    Stream& s = *owners[choose(link, agreeing_group(grid), posted)];
    s.receive.reset();
    const int64_t microbatch = s.next++;
    if (s.direction == kForward) {
      link.forward(s.chunk, microbatch, s.buffer.data());
      if (link.model_last(s.chunk)) link.backward(s.chunk, microbatch, nullptr), --backwards_left;
    } else {
      link.backward(s.chunk, microbatch, s.buffer.data()), --backwards_left;
      if (link.model_first(s.chunk)) ++finished;
    }
    if (s.next < M) s.receive = link.post_receive(s.direction, s.chunk, s.next, s.buffer);
    inject();
  }
  link.finish_sends();
}

// The k-th forward or backward of interleaved 1F1B (see the header).
struct Step {
  int64_t chunk, microbatch;
};
Step one_f_one_b_step(int64_t k, int64_t P, int64_t v, Direction direction) {
  const int64_t in_group = k % (P * v), chunk = in_group / P;
  return {direction == kForward ? chunk : v - 1 - chunk, k / (P * v) * P + k % P};
}

void run_one_f_one_b(StageLink& link, int64_t M) {
  const int64_t P = link.stages(), v = link.interleave(), s = link.stage(), steps = M * v;
  if (v > 1 && M % P != 0) {
    throw InputError("interleaved 1F1B: pipeline = " + std::to_string(P) + " does not divide the step's " +
                     std::to_string(M) + " microbatches (Narayanan et al. SC'21 §2.2)");
  }
  const int64_t warmup = one_f_one_b_warmup(P, v, M, s);
  DeviceFloats buffer = link.buffer();
  int64_t forwards = 0, backwards = 0;
  auto forward = [&] {
    const Step at = one_f_one_b_step(forwards++, P, v, kForward);
    if (link.model_first(at.chunk)) return link.forward(at.chunk, at.microbatch, nullptr);
    RequestPtr r = link.post_receive(kForward, at.chunk, at.microbatch, buffer);
    link.wait(*r);
    link.forward(at.chunk, at.microbatch, buffer.data());
  };
  auto backward = [&] {
    const Step at = one_f_one_b_step(backwards++, P, v, kBackward);
    if (link.model_last(at.chunk)) return link.backward(at.chunk, at.microbatch, nullptr);
    RequestPtr r = link.post_receive(kBackward, at.chunk, at.microbatch, buffer);
    link.wait(*r);
    link.backward(at.chunk, at.microbatch, buffer.data());
  };
  for (int64_t i = 0; i < warmup; ++i) forward();
  for (int64_t i = warmup; i < steps; ++i) forward(), backward();
  for (int64_t i = 0; i < warmup; ++i) backward();
  link.finish_sends();
}

// One stage: each microbatch through the chunks and back, handing the
// boundary tensors over locally (one chunk hands none over: no buffers).
void run_single_stage(PipelineStage& stage, StageLink& link, int64_t M, bool with_backward) {
  const int64_t v = link.interleave();
  const size_t boundary = v > 1 ? size_t(stage.boundary_size()) : 0;
  DeviceFloats a = link.buffer(boundary), b = link.buffer(boundary);
  for (int64_t mb = 0; mb < M; ++mb) {
    for (int64_t c = 0; c < v; ++c, std::swap(a, b)) {
      link.delay();
      stage.forward(c, mb, c == 0 ? nullptr : a.data(), c == v - 1 ? nullptr : b.data());
    }
    for (int64_t c = v; c-- > 0; std::swap(a, b)) {
      if (!with_backward) {
        stage.drop(c, mb);
        continue;
      }
      stage.backward(c, mb, c == v - 1 ? nullptr : a.data(), c == 0 ? nullptr : b.data());
    }
  }
}

}  // namespace

void run_pipeline(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, const ScheduleOptions& options,
                  PhaseTimes& times, DeviceMemory& memory) {
  StageLink link(stage, grid, options, times, memory);
  if (grid.config().pipeline == 1) {
    run_single_stage(stage, link, microbatches, true);
  } else if (options.schedule == Schedule::message_driven) {
    run_message_driven(link, grid, microbatches);
  } else {
    run_one_f_one_b(link, microbatches);
  }
}

// In the order (microbatch, model chunk) on every stage: each input is sent
// before it is waited for, so the blocking receives cannot deadlock.
void run_forward_only(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, PhaseTimes& times,
                      DeviceMemory& memory) {
  const ScheduleOptions none;
  StageLink link(stage, grid, none, times, memory);
  if (grid.config().pipeline == 1) return run_single_stage(stage, link, microbatches, false);
  DeviceFloats buffer = link.buffer();
  for (int64_t mb = 0; mb < microbatches; ++mb) {
    for (int64_t c = 0; c < link.interleave(); ++c) {
      const float* input = nullptr;
      if (!link.model_first(c)) {
        RequestPtr r = link.post_receive(kForward, c, mb, buffer);
        link.wait(*r);
        input = buffer.data();
      }
      link.forward(c, mb, input);
      stage.drop(c, mb);
    }
  }
  link.finish_sends();
}

}  // namespace axo
