// What a machine can do, as the cost model needs it: compute rates, memory,
// links and (optionally) measured collective and GEMM tables.
//
// The same schema is written by `axo calibrate` and by hand in the presets of
// configs/machines/; the two are interchangeable. Units are in the field
// names: GB/s means 1e9 bytes per second (as nccl-tests), GiB means 2^30
// bytes, us means microseconds.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/transformer_spec.h"

namespace axo {

enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, broadcast, send_recv };
const char* to_string(CollectiveOp op);
CollectiveOp parse_collective_op(const std::string& text, const std::string& where);

// One measured GEMM: C[m,n] = A[m,k]·B[k,n] ran at `tflops`.
struct GemmSample {
  Precision precision = Precision::bf16;
  int64_t m = 0, n = 0, k = 0;
  double tflops = 0;
};

// One piece of a piecewise latency/bandwidth fit: for messages up to
// max_bytes, time = alpha + ring-factor · bytes / bus_bandwidth.
struct LinkSegment {
  double max_bytes = 0;  // +inf for the last segment
  double alpha_us = 0;
  double bus_bandwidth_GBps = 0;
};

// A fitted collective for one group shape: `group_size` ranks of which
// `ranks_per_node` share each node, all groups of that shape running at once.
struct CollectiveFit {
  CollectiveOp op = CollectiveOp::all_reduce;
  int64_t group_size = 0;
  int64_t ranks_per_node = 0;
  std::vector<LinkSegment> segments;  // by increasing max_bytes
};

struct MachineProfile {
  std::string name;
  std::string source;
  std::string backend = "gpu";    // gpu or cpu: which executor backend it describes
  int64_t gpus_per_node = 1;      // devices (or ranks, on CPU) per node
  double device_memory_GiB = 0;   // per device
  double reserved_memory_GiB = 0; // runtime, allocator fragmentation, libraries
  double peak_tflops_fp32 = 0;
  double peak_tflops_fp16 = 0;
  double peak_tflops_bf16 = 0;
  double peak_tflops_fp8 = 0;     // dense fp8 GEMMs (peak_tflops.fp8); 0: the device has no fp8 rate
  double hbm_bandwidth_GBps = 0;
  // Achieved fraction of HBM bandwidth by memory-bound kernels (layernorm, softmax, GELU).
  double memory_bound_efficiency = 0.7;
  double kernel_launch_us = 5;
  // GEMM: the best fraction of peak large GEMMs reach, and measured samples.
  double gemm_max_efficiency = 0.8;
  // A GEMM dimension d scales efficiency by d / (d + gemm_half_efficiency_dim):
  // small dimensions under-fill the device's tiles (a roofline refinement).
  double gemm_half_efficiency_dim = 32;
  std::vector<GemmSample> gemm_table;
  // Links: intra-node (NVLink/NVSwitch, shared memory) and the node's NICs.
  double intra_alpha_us = 5;
  double intra_bus_bandwidth_GBps = 0;
  double inter_alpha_us = 10;
  int64_t nics_per_node = 1;
  double nic_bandwidth_GBps = 0;  // per NIC per direction
  double host_to_device_GBps = 0;
  double device_to_host_GBps = 0;
  // Adam steps on the host, parameters per second per device's share of the CPU.
  double cpu_optimizer_params_per_s = 0;
  // The fraction of an overlapped collective's time that hides under compute:
  // 1 for a device with its own communication engine (NCCL on a separate
  // stream); near 0 for MPI between CPU ranks, which progresses only inside
  // MPI calls (calibrate measures it).
  double overlap_efficiency = 1.0;
  // Collectives inside a training step take this many times their calibrated
  // time (ranks arriving apart, cores shared with compute); 1 unless refined
  // from measured runs (axo report / refine).
  double collective_slowdown = 1.0;
  std::vector<CollectiveFit> collectives;  // measured fits (calibrate)

  double peak_tflops(Precision precision) const;
  double usable_memory_bytes() const;
};

MachineProfile machine_profile_from_yaml(const YAML::Node& node, const std::string& source);
MachineProfile load_machine_profile(const std::string& path);
// Writes every field; `extra` (raw measurements, metadata) is copied in as is.
YAML::Node to_yaml(const MachineProfile& profile, const YAML::Node& extra = YAML::Node());

}  // namespace axo
