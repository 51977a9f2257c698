// The result of costing one configuration: where the time of an iteration
// goes and where the memory of a device goes.
//
// Component names are shared by the planner's CSV, the executor's run.json
// and the report, so predicted and measured line up one to one.
#pragma once

#include <array>
#include <string>

namespace axo {

// Bytes per device by kind, on the stage that needs the most.
struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double comm_buffers = 0;
  double total() const { return weights + gradients + optimizer + activations + comm_buffers; }
};

// The memory categories, in the order run.json and the report use.
inline constexpr std::array<const char*, 5> kMemoryNames = {"weights", "gradients", "optimizer", "activations",
                                                             "comm_buffers"};
inline std::array<double, 5> memory_parts(const MemoryBreakdown& m) {
  return {m.weights, m.gradients, m.optimizer, m.activations, m.comm_buffers};
}

// Seconds per iteration by component. They add up to iter_time.
struct Breakdown {
  double compute = 0;    // GEMMs and memory-bound ops on the slowest stage, recompute included
  double tp_comm = 0;    // exposed tensor-parallel collectives (X, Y, Z groups)
  double bubble = 0;     // pipeline fill and drain
  double pp_comm = 0;    // pipeline point-to-point
  double dp_comm = 0;    // exposed data-parallel gradient all-reduce
  double offload = 0;    // exposed host<->device traffic of CPU offload
  double optimizer = 0;  // optimizer step (device, or host with offload)
  double iter_time = 0;
  double tflops_per_gpu = 0;  // model FLOPs (no recompute) per second per GPU, in TFLOP/s
  double pct_peak = 0;        // tflops_per_gpu as a percentage of the device's peak
  // One transformer layer for one microbatch, exposed tensor-parallel
  // communication included; backward includes recomputation (under partial
  // recompute, the slowest stage's layers' average).
  double layer_forward = 0;
  double layer_backward = 0;
  MemoryBreakdown memory;
  double memory_capacity = 0;  // usable bytes per device
  bool fits = false;
};

// The component names, in the order the CSV and run.json use.
inline constexpr std::array<const char*, 7> kComponentNames = {
    "compute", "tp_comm", "bubble", "pp_comm", "dp_comm", "offload", "optimizer"};
inline std::array<double, 7> components(const Breakdown& b) {
  return {b.compute, b.tp_comm, b.bubble, b.pp_comm, b.dp_comm, b.offload, b.optimizer};
}

// The most seconds an iteration or a component of one may be, predicted (plan.yaml) or measured
// (run.json): more is a typing slip, not a run.
inline constexpr double kMostIterationSeconds = 1e12;

}  // namespace axo
