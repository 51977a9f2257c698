// Timing the executor's own compute on this machine: its GEMMs (cpu::gemm, fp32, bf16 and fp16),
// memory-bound copies (what the model calls HBM bandwidth; on the CPU backend
// the "device" is host memory), host<->device copies (on CPU a memcpy between
// two buffers), its element-wise kernels and its AdamW step. All ranks run at
// once, as in training, and each figure is the slowest rank's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/deadline.h"
#include "executor/comm/communicator.h"
#include "model/machine_profile.h"

namespace axo::calibration {

// Runs `work` (after one warm-up) until at least `min_seconds` passed and
// returns the slowest rank's seconds per run, bounded by the watchdog.
double slowest_seconds_per_run(Communicator& world, double timeout_s, Watchdog* watchdog,
                               const std::string& what, double min_seconds, const std::function<void()>& work);

struct GemmShape {
  int64_t m, n, k;
};

// Every (m, n, k) with each of m, n, k in `sizes`, plus the given extra shapes, each shape once.
std::vector<GemmShape> gemm_grid(const std::vector<int64_t>& sizes, const std::vector<GemmShape>& extra);
// The CPU grid (smaller with `quick`).
std::vector<GemmShape> gemm_shapes(bool quick, const std::vector<GemmShape>& extra);

// Achieved TFLOP/s of each shape in each precision the CPU backend computes
// in, through cpu::gemm: fp32, then bf16 and fp16 (2-byte A and B, fp32 C, gemm_half).
// `watchdog` (optional) bounds each measurement by `timeout_s`.
std::vector<GemmSample> measure_gemms(Communicator& world, const std::vector<GemmShape>& shapes,
                                      double timeout_s, Watchdog* watchdog = nullptr);

struct MemoryRates {
  double copy_GBps = 0;            // device memory: bytes read + written per second by a large copy
  double host_to_device_GBps = 0;  // the host link (on CPU: a memcpy between two buffers)
  double device_to_host_GBps = 0;
  double adam_params_per_s = 0;    // AdamW parameters updated per second on the host
  // The executor's element-wise kernels (LayerNorm, GELU, residual; forward
  // and backward) in the cost model's bytes per second: their bytes as
  // CostModel::compute_local counts them over their time. 0: not measured.
  double elementwise_GBps = 0;
};
// All but elementwise_GBps, which the CPU backend measures apart:
MemoryRates measure_memory(Communicator& world, double timeout_s, Watchdog* watchdog = nullptr);
// The CPU executor's element-wise kernels in the cost model's bytes per second.
double measure_elementwise_GBps(Communicator& world, double timeout_s, Watchdog* watchdog = nullptr);

// What fraction of the copy bandwidth the element-wise kernels reach: the
// profile's memory_bound_efficiency (1 where they were not measured).
double memory_bound_efficiency(const MemoryRates& rates);

}  // namespace axo::calibration
