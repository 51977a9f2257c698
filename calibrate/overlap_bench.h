// How much of a non-blocking collective hides under compute on this machine,
// measured with the executor's own communicator and GEMM: the machine
// profile's overlap_efficiency (model/machine_profile.h).
//
// Every rank times a GEMM alone (t_g), a non-blocking all-gather over the
// world alone (t_c, sized to take about as long), and the all-gather started
// before the GEMM and waited for after it (t_o). The hidden fraction of the
// shorter of the two is (t_g + t_c − t_o) / min(t_g, t_c), clamped to [0, 1]:
// 1 when the collective progresses by itself, 0 when it only moves inside
// the wait (MPI between CPU ranks without a progress thread).
#pragma once

#include "calibrate/deadline.h"
#include "executor/comm/communicator.h"

namespace axo::calibration {

struct OverlapMeasurement {
  double gemm_s = 0, collective_s = 0, overlapped_s = 0;  // slowest rank's, per run
  double efficiency = 0;
};

// CPU backend (cpu::gemm, host buffers). `watchdog` (optional) bounds each timing by `timeout_s`.
OverlapMeasurement measure_overlap(Communicator& world, double timeout_s, Watchdog* watchdog = nullptr);

}  // namespace axo::calibration
