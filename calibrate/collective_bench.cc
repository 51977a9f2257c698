// Timed, checked collectives (see collective_bench.h).
#include "calibrate/collective_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "model/comm_model.h"

namespace axo::calibration {

double Measurement::busbw_GBps() const { return algbw_GBps() * bus_factor(op, shape.size); }

namespace {

float input_value(int64_t position, size_t i) { return float(position + 1 + int64_t(i % 3)); }

class HostMemory : public BufferSpace {
 public:
  float* allocate(size_t count) const override { return new float[std::max<size_t>(count, 1)]; }
  void release(float* buffer) const override { delete[] buffer; }
  void upload(float* buffer, const std::vector<float>& values) const override {
    std::copy(values.begin(), values.end(), buffer);
  }
  std::vector<float> download(const float* buffer, size_t count) const override {
    return std::vector<float>(buffer, buffer + count);
  }
};

// The send and receive buffers of one operation, in `space`.
struct Buffers {
  const BufferSpace& space;
  size_t send_count = 0, recv_count = 0;
  float* send = nullptr;
  float* recv = nullptr;
  Buffers(const BufferSpace& s, size_t sends, size_t receives)
      : space(s), send_count(sends), recv_count(receives), send(s.allocate(sends)), recv(s.allocate(receives)) {}
  ~Buffers() {
    space.release(send);
    space.release(recv);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

// Buffers of `op` for a full buffer of `count` elements over p ranks.
std::unique_ptr<Buffers> make_buffers(const BufferSpace& space, CollectiveOp op, size_t count, int64_t p) {
  const size_t per_rank = count / size_t(p);
  switch (op) {
    case CollectiveOp::all_gather: return std::make_unique<Buffers>(space, per_rank, count);
    case CollectiveOp::reduce_scatter: return std::make_unique<Buffers>(space, count, per_rank);
    default: return std::make_unique<Buffers>(space, count, count);
  }
}

void fill(Buffers& b, CollectiveOp op, int64_t position) {
  std::vector<float> input(b.send_count);
  for (size_t i = 0; i < input.size(); ++i) input[i] = input_value(position, i);
  b.space.upload(b.send, input);
  if (op == CollectiveOp::all_reduce || op == CollectiveOp::broadcast) {
    if (op == CollectiveOp::broadcast && position != 0) std::fill(input.begin(), input.end(), -1.0f);
    b.space.upload(b.recv, input);
  }
  if (op == CollectiveOp::send_recv) b.space.upload(b.recv, std::vector<float>(b.recv_count, -1.0f));
}

// Runs one operation to completion with the communicator's blocking calls;
// send/recv exchanges buffers both ways at once, as neighbouring pipeline
// stages do in steady state.
void run_once(const CollectiveBench& bench, CollectiveOp op, Buffers& b, int64_t position) {
  Communicator& g = *bench.group;
  switch (op) {
    case CollectiveOp::all_reduce: g.all_reduce(b.recv, b.recv_count); return;
    case CollectiveOp::all_gather: g.all_gather(b.send, b.recv, b.send_count); return;
    case CollectiveOp::reduce_scatter: g.reduce_scatter(b.send, b.recv, b.recv_count); return;
    case CollectiveOp::broadcast: g.broadcast(b.recv, b.recv_count, 0); return;
    case CollectiveOp::send_recv: {
      const int peer = int(1 - position);
      RequestPtr receive = g.start_recv(b.recv, b.recv_count, peer, 7);
      RequestPtr send = g.start_send(b.send, b.send_count, peer, 7);
      send->wait();
      receive->wait();
      return;
    }
  }
}

// The value element i of this rank's result must have.
float expected(CollectiveOp op, int64_t p, int64_t position, size_t i, size_t per_rank) {
  switch (op) {
    case CollectiveOp::all_reduce: return float(p * (p + 1) / 2 + p * int64_t(i % 3));
    case CollectiveOp::all_gather: return input_value(int64_t(i / per_rank), i % per_rank);
    case CollectiveOp::reduce_scatter: {
      const size_t global = size_t(position) * per_rank + i;
      return float(p * (p + 1) / 2 + p * int64_t(global % 3));
    }
    case CollectiveOp::broadcast: return input_value(0, i);
    case CollectiveOp::send_recv: return input_value(1 - position, i);
  }
  return 0;
}

}  // namespace

const BufferSpace& host_memory() {
  static const HostMemory memory;
  return memory;
}

double measured_message_bytes(double bytes, int64_t ranks) {
  const size_t count = size_t(std::max(1.0, bytes / sizeof(float)));
  return double(std::max<size_t>(count / size_t(ranks), 1) * size_t(ranks) * sizeof(float));  // divisible by the group
}

Measurement measure(const CollectiveBench& bench, CollectiveOp op, double bytes) {
  const int64_t p = bench.shape.size;
  const int64_t position = bench.group->rank();
  const int me = bench.world->rank();
  const size_t count = size_t(measured_message_bytes(bytes, p)) / sizeof(float);
  Measurement m;
  m.op = op;
  m.shape = bench.shape;
  m.bytes = double(count * sizeof(float));
  const std::string what = std::string(to_string(op)) + " of " + std::to_string(int64_t(m.bytes)) +
                           " bytes over groups of " + std::to_string(p) + " (stride " +
                           std::to_string(bench.shape.stride) + ")";
  if (bench.fault.hang_rank == me) std::this_thread::sleep_for(std::chrono::hours(1));

  const Deadline deadline(bench.watchdog, bench.timeout_s, what);
  const std::unique_ptr<Buffers> buffers = make_buffers(*bench.space, op, count, p);
  Buffers& b = *buffers;
  // Correctness first, on fresh inputs.
  fill(b, op, position);
  run_once(bench, op, b, position);
  std::vector<float> result = b.space.download(b.recv, b.recv_count);
  if (bench.fault.corrupt && me == bench.world->size() - 1) result[0] += 1.0f;
  const size_t per_rank = count / size_t(p);
  for (size_t i = 0; i < result.size(); ++i) {
    const float want = expected(op, p, position, i, per_rank);
    if (result[i] != want) {
      throw CalibrationError("rank " + std::to_string(me) + ": " + what + " gave " +
                             std::to_string(result[i]) + " at element " + std::to_string(i) +
                             ", expected " + std::to_string(want) + ": the collective is wrong");
    }
  }

  // Timing: warm-up, then enough iterations for the size.
  const double mib = m.bytes / double(1 << 20);
  const int64_t iterations =
      std::clamp<int64_t>(int64_t(double(bench.base_iterations) / std::sqrt(std::max(mib, 1e-3))), 3,
                          50 * bench.base_iterations);
  for (int i = 0; i < 2; ++i) run_once(bench, op, b, position);
  float token = 0;
  bench.world->all_reduce(&token, 1);  // start together
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < iterations; ++i) run_once(bench, op, b, position);
  float seconds = float(std::chrono::duration<double>(Clock::now() - t0).count() / double(iterations));
  // The slowest rank's time: every rank puts its time in its slot of a
  // zeroed vector, the sum gathers them all, and each takes the largest.
  std::vector<float> all(size_t(bench.world->size()), 0.0f);
  all[size_t(me)] = seconds;
  bench.world->all_reduce(all.data(), all.size());
  m.seconds = double(*std::max_element(all.begin(), all.end()));
  m.iterations = iterations;
  return m;
}

}  // namespace axo::calibration
