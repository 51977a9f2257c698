// Message-driven and 1F1B pipeline schedules (see pipeline_schedule.h).
#include "executor/parallel/pipeline_schedule.h"

#include <chrono>
#include <deque>
#include <random>
#include <thread>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/timer.h"
#include "model/error.h"

namespace axo {

Schedule parse_schedule(const std::string& text) {
  if (text == "message-driven") return Schedule::message_driven;
  if (text == "1f1b") return Schedule::one_f_one_b;
  throw InputError("--schedule: expected message-driven or 1f1b, got '" + text + "'");
}

const char* to_string(Schedule schedule) {
  return schedule == Schedule::message_driven ? "message-driven" : "1f1b";
}

namespace {

// MPI guarantees tags up to at least 32767 (MPI_TAG_UB); microbatch ids wrap
// there. Messages between two stages arrive in microbatch order, so a
// wrapped tag is never ambiguous.
int tag_of(int64_t microbatch) { return int(microbatch % 32768); }

// One step's traffic with the neighbouring stages.
class StageLink {
 public:
  StageLink(PipelineStage& stage, const ProcessGrid& grid, const ScheduleOptions& options, PhaseTimes& times,
            DeviceMemory& memory)
      : stage_(stage),
        buffers_(memory, DeviceUse::comm_buffers),
        pipe_(grid.pipeline()),
        s_(grid.coords().pipeline),
        last_(int(grid.config().pipeline) - 1),
        n_(size_t(stage.boundary_size())),
        options_(options),
        times_(times),
        rng_(options.seed + uint64_t(s_)) {}

  bool first() const { return s_ == 0; }
  bool last() const { return s_ == last_; }

  DeviceFloats buffer() const { return DeviceFloats(buffers_); }
  RequestPtr post_receive(bool forward, int64_t microbatch, DeviceFloats& buffer) {
    buffer.resize(n_);
    RequestPtr r;
    timed(times_.pp_comm, [&] { r = pipe_.start_recv(buffer.data(), n_, forward ? s_ - 1 : s_ + 1, tag_of(microbatch)); });
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

  // Forward of `microbatch` from `input`, sending the result on (or, on the
  // last stage, running its backward at once and sending the gradient back).
  void forward(int64_t microbatch, const float* input) {
    delay();
    DeviceFloats output(last() ? 0 : n_, 0.0f, buffers_);
    stage_.forward(microbatch, input, last() ? nullptr : output.data());
    if (!last()) send(std::move(output), s_ + 1, microbatch);
  }
  void backward(int64_t microbatch, const float* doutput) {
    DeviceFloats dinput(first() ? 0 : n_, 0.0f, buffers_);
    stage_.backward(microbatch, doutput, first() ? nullptr : dinput.data());
    if (!first()) send(std::move(dinput), s_ - 1, microbatch);
  }
  // The last sends complete when the neighbour takes them: waiting for it is idle time.
  void finish_sends() {
    timed(times_.bubble, [&] {
      for (Pending& p : sends_) p.request->wait();
      sends_.clear();
    });
  }

 private:
  struct Pending {
    DeviceFloats buffer;
    RequestPtr request;
  };
  void send(DeviceFloats data, int peer, int64_t microbatch) {
    timed(times_.pp_comm, [&] {
      Pending p{std::move(data), nullptr};
      p.request = pipe_.start_send(p.buffer.data(), n_, peer, tag_of(microbatch));
      sends_.push_back(std::move(p));
      while (!sends_.empty() && sends_.front().request->test()) sends_.pop_front();
    });
  }
  void delay() {
    if (s_ != options_.delayed_stage) return;
    double seconds = options_.delay_s;
    if (options_.jitter_s > 0) seconds += std::uniform_real_distribution<double>(0, options_.jitter_s)(rng_);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }

  PipelineStage& stage_;
  DeviceAllocator<float> buffers_;
  Communicator& pipe_;
  int s_, last_;
  size_t n_;
  const ScheduleOptions& options_;
  PhaseTimes& times_;
  std::mt19937_64 rng_;
  std::deque<Pending> sends_;
};

void run_message_driven(StageLink& link, const ProcessGrid& grid, int64_t M) {
  const int64_t P = grid.config().pipeline;
  DeviceFloats forward_buffer = link.buffer(), backward_buffer = link.buffer();
  RequestPtr forward_receive, backward_receive;
  int64_t next_forward = 0, next_backward = 0, injected = 0;
  if (link.first()) {
    for (; injected < std::min(P, M); ++injected) link.forward(injected, nullptr);
  } else {
    forward_receive = link.post_receive(true, next_forward, forward_buffer);
  }
  if (!link.last()) backward_receive = link.post_receive(false, next_backward, backward_buffer);
  Communicator& tensor = grid.tensor();
  while (next_backward < M) {
    std::vector<Request*> posted;
    if (forward_receive) posted.push_back(forward_receive.get());
    if (backward_receive) posted.push_back(backward_receive.get());
    // Which arrived first; the tensor group follows its first rank's choice.
    size_t chosen = 0;
    if (posted.size() == 1) {
      link.wait(*posted[0]);
    } else if (tensor.size() == 1) {
      link.wait_any(posted, chosen);
    } else {
      float choice = 0;
      if (tensor.rank() == 0) {
        link.wait_any(posted, chosen);
        choice = float(chosen);
      }
      link.agree(tensor, choice);
      chosen = size_t(choice);
      if (tensor.rank() != 0) link.wait(*posted[chosen]);
    }
    if (posted[chosen] == forward_receive.get()) {
      forward_receive.reset();
      const int64_t microbatch = next_forward++;
      link.forward(microbatch, forward_buffer.data());
      if (link.last()) link.backward(next_backward++, nullptr);
      if (next_forward < M) forward_receive = link.post_receive(true, next_forward, forward_buffer);
    } else {
      backward_receive.reset();
      link.backward(next_backward++, backward_buffer.data());
      if (next_backward < M) backward_receive = link.post_receive(false, next_backward, backward_buffer);
      if (link.first() && injected < M) link.forward(injected++, nullptr);
    }
  }
  link.finish_sends();
}

void run_one_f_one_b(StageLink& link, const ProcessGrid& grid, int64_t M) {
  const int64_t P = grid.config().pipeline, s = grid.coords().pipeline;
  const int64_t warmup = std::min(P - s - 1, M);
  DeviceFloats buffer = link.buffer();
  int64_t next_forward = 0, next_backward = 0;
  auto forward = [&] {
    const int64_t microbatch = next_forward++;
    if (link.first()) return link.forward(microbatch, nullptr);
    RequestPtr r = link.post_receive(true, microbatch, buffer);
    link.wait(*r);
    link.forward(microbatch, buffer.data());
  };
  auto backward = [&] {
    const int64_t microbatch = next_backward++;
    if (link.last()) return link.backward(microbatch, nullptr);
    RequestPtr r = link.post_receive(false, microbatch, buffer);
    link.wait(*r);
    link.backward(microbatch, buffer.data());
  };
  for (int64_t i = 0; i < warmup; ++i) forward();
  for (int64_t i = warmup; i < M; ++i) forward(), backward();
  for (int64_t i = 0; i < warmup; ++i) backward();
  link.finish_sends();
}

}  // namespace

void run_pipeline(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, const ScheduleOptions& options,
                  PhaseTimes& times, DeviceMemory& memory) {
  StageLink link(stage, grid, options, times, memory);
  if (grid.config().pipeline == 1) {
    for (int64_t mb = 0; mb < microbatches; ++mb) link.forward(mb, nullptr), link.backward(mb, nullptr);
  } else if (options.schedule == Schedule::message_driven) {
    run_message_driven(link, grid, microbatches);
  } else {
    run_one_f_one_b(link, grid, microbatches);
  }
}

void run_forward_only(PipelineStage& stage, const ProcessGrid& grid, int64_t microbatches, PhaseTimes& times,
                      DeviceMemory& memory) {
  const ScheduleOptions none;
  StageLink link(stage, grid, none, times, memory);
  DeviceFloats buffer = link.buffer();
  for (int64_t mb = 0; mb < microbatches; ++mb) {
    const float* input = nullptr;
    if (!link.first()) {
      RequestPtr r = link.post_receive(true, mb, buffer);
      link.wait(*r);
      input = buffer.data();
    }
    link.forward(mb, input);
    stage.drop(mb);
  }
  link.finish_sends();
}

}  // namespace axo
