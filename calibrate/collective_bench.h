// Timing one collective over one group shape, nccl-tests style: warm-up,
// enough iterations for the size, the slowest rank's time, algorithm and bus
// bandwidth, and a correctness check of the result on every rank.
//
// Inputs are small integers (rank position + 1 + i mod 3), so every sum is
// exact in float and a wrong element is an error, not a number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/deadline.h"
#include "calibrate/group_shapes.h"
#include "executor/comm/communicator.h"
#include "model/machine_profile.h"

namespace axo::calibration {

struct Measurement {
  CollectiveOp op = CollectiveOp::all_reduce;
  GroupShape shape;
  double bytes = 0;    // the full buffer (comm_model.h's S)
  double seconds = 0;  // per operation, slowest rank
  int64_t iterations = 0;
  double algbw_GBps() const { return bytes / seconds / 1e9; }
  double busbw_GBps() const;
};

// Test-only faults, to check that calibration catches them.
struct FaultInjection {
  bool corrupt = false;  // the last rank alters one element of its result
  int hang_rank = -1;    // this rank stops answering before its first collective
};

// Where a measurement's buffers live: host memory for the MPI communicator,
// device memory for NCCL (gpu_bench.h).
class BufferSpace {
 public:
  virtual ~BufferSpace() = default;
  virtual float* allocate(size_t count) const = 0;
  virtual void release(float* buffer) const = 0;
  virtual void upload(float* buffer, const std::vector<float>& values) const = 0;
  virtual std::vector<float> download(const float* buffer, size_t count) const = 0;
};
const BufferSpace& host_memory();

struct CollectiveBench {
  Communicator* world = nullptr;  // every rank takes part
  Communicator* group = nullptr;  // this rank's group of `shape`
  GroupShape shape;
  int64_t base_iterations = 20;   // at 1 MiB; more for smaller messages, fewer for larger
  double timeout_s = 60;          // per measurement
  Watchdog* watchdog = nullptr;   // armed for each measurement when given
  FaultInjection fault;
  const BufferSpace* space = &host_memory();
};

// Measures `op` with a buffer of `bytes`; throws CalibrationError on a wrong
// result (a timeout ends the process through the watchdog).
Measurement measure(const CollectiveBench& bench, CollectiveOp op, double bytes);
// The bytes a message of `bytes` is measured at over `ranks`: whole floats, a multiple of the ranks.
double measured_message_bytes(double bytes, int64_t ranks);

}  // namespace axo::calibration
