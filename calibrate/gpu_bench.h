// Calibration on GPUs (built with AXO_CUDA): device buffers for the NCCL
// collectives, cuBLAS GEMM rates per precision, device memory bandwidth and
// the pinned host<->device links, every local device at once.
#pragma once

#include <vector>

#include "calibrate/collective_bench.h"
#include "calibrate/compute_bench.h"

namespace axo::calibration {

const BufferSpace& device_memory();

// A grid of GEMM shapes sized for a GPU (smaller with `quick`), plus `extra`.
std::vector<GemmShape> gpu_gemm_shapes(bool quick, const std::vector<GemmShape>& extra);

// TFLOP/s of each shape in bf16 and fp32 through cuda::CublasGemm.
std::vector<GemmSample> measure_gpu_gemms(Communicator& world, const std::vector<GemmShape>& shapes,
                                          double timeout_s, Watchdog* watchdog);

struct DeviceRates {
  double copy_GBps = 0;            // device-to-device copy, bytes read + written per second
  double host_to_device_GBps = 0;  // pinned host memory to the device
  double device_to_host_GBps = 0;
};
DeviceRates measure_device_memory(Communicator& world, double timeout_s, Watchdog* watchdog);

}  // namespace axo::calibration
