// `axo calibrate`: measure this machine's collectives, GEMMs, memory and
// optimizer under MPI and write a machine profile the planner reads.
//
// Order: compute first (GEMM grid, memory copy, AdamW: local and quick),
// then every collective over every group shape and message size. A wrong
// result or a timeout ends the run with a message naming the rank and the
// operation, after writing the profile of what was measured so far
// (metadata.complete: false); a wrong result then calls MPI_Abort, a timeout
// ends the waiting process (deadline.h), and mpirun stops every rank.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "calibrate/collective_bench.h"
#include "calibrate/compute_bench.h"
#include "model/machine_profile.h"

namespace axo::calibration {

struct CalibrationOptions {
  std::string out;                    // profile path (written by rank 0)
  std::string name;                   // profile name; default calibrated-<host>
  bool quick = false;                 // a short sweep
  std::vector<CollectiveOp> ops = {CollectiveOp::all_reduce, CollectiveOp::all_gather,
                                   CollectiveOp::reduce_scatter, CollectiveOp::broadcast,
                                   CollectiveOp::send_recv};
  double min_bytes = 64;
  double max_bytes = 0;               // 0: 64 MiB, or 4 MiB with quick
  int64_t iterations = 20;            // at 1 MiB; scaled for other sizes
  int64_t ranks_per_node = 0;         // 0: from the launcher (shared-memory split)
  double timeout_s = 60;              // per measurement
  std::vector<GemmShape> extra_gemms; // e.g. a model's local shapes
  FaultInjection fault;               // tests only
};

// Runs on every rank of MPI_COMM_WORLD (MPI already initialised). Rank 0
// prints tables and progress and writes the profile. Returns the profile.
// Throws InputError for a bad launch (one rank, ranks per node not dividing
// the world).
MachineProfile run_calibration(const CalibrationOptions& options);

// What the calibrating rank's device is: its memory and, on a GPU, its SMs
// (gemm.sm_count; 0 on CPU ranks).
struct DeviceFacts {
  double memory_GiB = 0;
  int64_t sm_count = 0;
};

// The profile's gpus_per_host: the launcher's ranks on one host where --ranks-per-node makes a
// node of several hosts (GB200's trays in one NVLink domain); 0 (a node is one host) otherwise.
int64_t hosts_gpus(int64_t launcher_per_node, int64_t ranks_per_node);

// Builds the profile from measurements (exposed for tests).
MachineProfile build_profile(const std::string& name, bool gpu, int64_t ranks_per_node,
                             const std::vector<GemmSample>& gemms, const MemoryRates& memory,
                             const std::vector<Measurement>& measurements, const DeviceFacts& device);

// The all-local GEMM shapes of one layer of `spec` with microbatch 1 and no
// tensor parallelism, forward, dX and dW.
std::vector<GemmShape> model_gemm_shapes(const TransformerSpec& spec);

}  // namespace axo::calibration
