// The calibration run (see calibration.h).
#include "calibrate/calibration.h"

#include <mpi.h>
#include <cblas.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "calibrate/deadline.h"
#include "calibrate/fit.h"
#include "calibrate/group_shapes.h"
#include "calibrate/progress.h"
#include "calibrate/overlap_bench.h"
#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/cpu/onednn_matmul.h"
#include "model/atomic_file.h"
#include "model/error.h"
#ifdef AXO_WITH_CUDA
#include <cuda_runtime.h>

#include "calibrate/gpu_bench.h"
#include "executor/cuda/device.h"
#include "executor/cuda/nccl_communicator.h"
#endif

namespace axo::calibration {

namespace {

std::string utc_now() {
  char text[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, size_t(length));
}

// Ranks that share this rank's node, from the launcher.
int64_t launcher_ranks_per_node() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int size = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size;
}

std::vector<double> message_sizes(double min_bytes, double max_bytes) {
  std::vector<double> sizes;
  for (double bytes = min_bytes; bytes <= max_bytes; bytes *= 2) sizes.push_back(bytes);
  return sizes;
}

YAML::Node raw_tables(const std::vector<Measurement>& measurements, const std::vector<GemmSample>& gemms,
                      const MemoryRates& memory) {
  YAML::Node raw;
  for (const Measurement& m : measurements) {
    YAML::Node row;
    row["op"] = to_string(m.op);
    row["group_size"] = m.shape.size;
    row["stride"] = m.shape.stride;
    row["ranks_per_node"] = m.shape.ranks_per_node;
    row["bytes"] = m.bytes;
    row["time_us"] = m.seconds * 1e6;
    row["iterations"] = m.iterations;
    row["algbw_GBps"] = m.algbw_GBps();
    row["busbw_GBps"] = m.busbw_GBps();
    row.SetStyle(YAML::EmitterStyle::Flow);
    raw["collectives"].push_back(row);
  }
  raw["gemm_samples"] = int64_t(gemms.size());
  raw["memory"]["copy_GBps"] = memory.copy_GBps;
  raw["memory"]["host_to_device_GBps"] = memory.host_to_device_GBps;
  raw["memory"]["device_to_host_GBps"] = memory.device_to_host_GBps;
  raw["memory"]["adam_params_per_s"] = memory.adam_params_per_s;
  raw["memory"]["elementwise_GBps"] = memory.elementwise_GBps;
  return raw;
}

void print_header(const Measurement& m) {
  std::printf("#\n# %s, groups of %lld ranks at stride %lld (%lld per node)\n", to_string(m.op),
              (long long)m.shape.size, (long long)m.shape.stride, (long long)m.shape.ranks_per_node);
  std::printf("#%13s %12s %10s %10s %11s %11s %7s\n", "size (B)", "count", "iters", "time (us)",
              "algbw(GB/s)", "busbw(GB/s)", "#wrong");
}

void print_row(const Measurement& m) {
  std::printf("%14.0f %12.0f %10lld %10.2f %11.3f %11.3f %7d\n", m.bytes, m.bytes / 4,
              (long long)m.iterations, m.seconds * 1e6, m.algbw_GBps(), m.busbw_GBps(), 0);
  std::fflush(stdout);
}

void progress(const std::string& text) {
  if (isatty(fileno(stderr))) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

}  // namespace

std::vector<GemmShape> model_gemm_shapes(const TransformerSpec& s) {
  std::vector<GemmShape> shapes;
  const int64_t m = s.seq_len;
  for (auto [n, k] : {std::pair{s.qkv_width(), s.hidden}, std::pair{s.hidden, s.hidden},
                      std::pair{s.mlp_up_width(), s.hidden}, std::pair{s.hidden, s.ffn_hidden}}) {
    shapes.push_back({m, n, k});  // forward
    shapes.push_back({m, k, n});  // dX
    shapes.push_back({n, k, m});  // dW
  }
  return shapes;
}

int64_t hosts_gpus(int64_t launcher_per_node, int64_t ranks_per_node) {
  const bool several_hosts = launcher_per_node < ranks_per_node && ranks_per_node % launcher_per_node == 0;
  return several_hosts ? launcher_per_node : 0;
}

MachineProfile build_profile(const std::string& name, bool gpu, int64_t ranks_per_node,
                             const std::vector<GemmSample>& gemms, const MemoryRates& memory,
                             const std::vector<Measurement>& measurements, const DeviceFacts& device) {
  MachineProfile p;
  p.name = name;
  p.backend = gpu ? "gpu" : "cpu";
  p.gpus_per_node = ranks_per_node;
  p.device_memory_GiB = device.memory_GiB;
  p.gemm_sm_count = device.sm_count;
  auto best = [&](Precision precision) {
    double rate = 0;
    for (const GemmSample& s : gemms) {
      if (s.precision == precision) rate = std::max(rate, s.tflops);
    }
    return rate;
  };
  // The peak of a precision is its best measured rate. On GPUs fp16 runs at
  // the bf16 rate; on the CPU each has its own GEMM (cpu::gemm, gemm_half:
  // fp16 widened onto the fp32 GEMM), measured, and a profile calibrated
  // before bf16 or fp16 GEMMs were measured prices them at the fp32 rate.
  p.peak_tflops_fp32 = std::max(best(Precision::fp32), kUnmeasuredTflops);
  auto measured_or_fp32 = [&](Precision precision) {
    return best(precision) > 0 ? std::max(best(precision), kUnmeasuredTflops) : p.peak_tflops_fp32;
  };
  p.peak_tflops_bf16 = gpu ? std::max(best(Precision::bf16), kUnmeasuredTflops) : measured_or_fp32(Precision::bf16);
  p.peak_tflops_fp16 = gpu ? std::max(p.peak_tflops_bf16, best(Precision::fp16)) : measured_or_fp32(Precision::fp16);
  p.gemm_max_efficiency = 1.0;  // peak is the best measured rate; the table corrects the rest
  p.gemm_table = gemms;
  p.activations = ActivationLayout::axo;  // the executor it measured keeps its own layout (memory only)
  // and communicates in fp32 whatever it trains in: its gradients reduced as fp32 copies, its
  // activations and pipeline messages sent as fp32 views (machine_profile.h).
  p.reduce_dtype = ReduceDtype::fp32_copy;
  p.activation_comm_dtype = ActivationCommDtype::fp32;
  p.hbm_bandwidth_GBps = std::max(memory.copy_GBps, kUnmeasuredBandwidthGBps);
  p.memory_bound_efficiency = memory_bound_efficiency(memory);
  p.kernel_launch_us = 0.5;
  p.host_to_device_GBps = std::max(memory.host_to_device_GBps, 1e-6);
  p.device_to_host_GBps = std::max(memory.device_to_host_GBps, 1e-6);
  p.cpu_optimizer_params_per_s = std::max(memory.adam_params_per_s, 1.0);

  // Fits per op and placement.
  std::map<std::tuple<CollectiveOp, int64_t, int64_t>, std::vector<TimedSize>> points;
  for (const Measurement& m : measurements) {
    points[{m.op, m.shape.size, m.shape.ranks_per_node}].push_back({m.bytes, m.seconds});
  }
  for (const auto& [key, timed] : points) {
    const auto& [op, size, per_node] = key;
    if (timed.size() < 2) continue;
    // Send/recv is measured on pairs: the model asks for group size 2.
    p.collectives.push_back({op, size, per_node, fit_segments(op, size, timed)});
  }
  // Summary links from the all-reduce fits: the largest group inside a node,
  // and groups with one rank per node (NIC-bound).
  const CollectiveFit* intra = nullptr;
  const CollectiveFit* inter = nullptr;
  for (const CollectiveFit& fit : p.collectives) {
    if (fit.op != CollectiveOp::all_reduce) continue;
    if (fit.ranks_per_node == fit.group_size && (!intra || fit.group_size > intra->group_size)) intra = &fit;
    if (fit.ranks_per_node == 1 && (!inter || fit.group_size > inter->group_size)) inter = &fit;
  }
  auto per_step_alpha = [](const CollectiveFit& fit) {
    return fit.segments.front().alpha_us / double(2 * (fit.group_size - 1));
  };
  if (!intra) intra = inter;
  if (!inter) inter = intra;
  if (intra) {
    p.intra_alpha_us = per_step_alpha(*intra);
    p.intra_bus_bandwidth_GBps = intra->segments.back().bus_bandwidth_GBps;
    p.inter_alpha_us = per_step_alpha(*inter);
    p.nics_per_node = 1;
    // One rank per node gets nics·nic_bandwidth / ranks_per_node (comm_model.h).
    p.nic_bandwidth_GBps = inter->segments.back().bus_bandwidth_GBps * double(ranks_per_node);
  } else {  // no all-reduce measured: the memory copy rate stands in
    p.intra_bus_bandwidth_GBps = p.nic_bandwidth_GBps = p.host_to_device_GBps;
  }
  return p;
}

namespace {

// The launch as the sweep sees it, checked before anything is measured.
struct Launch {
  int me = 0;
  int64_t ranks = 0;
  int64_t launcher_per_node = 0;   // ranks on this host, from the launcher
  int64_t per_node = 0;            // ranks per node as calibrated (--ranks-per-node)
  std::vector<GroupShape> shapes;  // the groups the sweep measures (none without collectives)
  bool gpu = false;
  int cuda_device = -1;
  int blas_threads = 1;            // the host's cores shared by the ranks on it
  double max_bytes = 0;            // the largest message
};

// The groups the sweep measures; refuses a launch it cannot calibrate.
std::vector<GroupShape> checked_group_shapes(const CalibrationOptions& o, int64_t ranks, int64_t per_node) {
  if (ranks < 2) {
    throw InputError("calibration needs at least 2 ranks: run it as mpirun -np N axo calibrate ...");
  }
  if (ranks % per_node != 0) {
    throw InputError("--ranks-per-node " + std::to_string(per_node) + " does not divide the " +
                     std::to_string(ranks) + " ranks of this launch");
  }
  const std::vector<GroupShape> shapes = o.ops.empty() ? std::vector<GroupShape>{} : group_shapes(ranks, per_node);
  if (!o.ops.empty() && shapes.empty()) {
    throw InputError("calibration measures groups of 2, 4, 8... ranks that tile the launch; none tiles " +
                     std::to_string(ranks) + " ranks: launch an even number (mpirun -np 2, 4, 8 ...)");
  }
  if (o.fault.hang_rank >= ranks) {
    throw InputError("--inject-fault hang:" + std::to_string(o.fault.hang_rank) + ": this launch has ranks 0 to " +
                     std::to_string(ranks - 1));
  }
  return shapes;
}

// This rank's CUDA device, by its place on the node; -1 without GPUs.
int select_gpu() {
#ifdef AXO_WITH_CUDA
  if (cuda::device_count() > 0) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local_rank = 0;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    return cuda::select_device(local_rank);
  }
#endif
  return -1;
}

// The largest message; refuses sizes that leave a group one measured size.
double checked_max_bytes(const CalibrationOptions& o, bool gpu, const std::vector<GroupShape>& shapes) {
  const double max_bytes =
      o.max_bytes > 0 ? o.max_bytes : (gpu ? (o.quick ? 16.0 : 256.0) : (o.quick ? 4.0 : 64.0)) * (1 << 20);
  if (o.min_bytes > max_bytes) {
    throw InputError("--min-bytes " + std::to_string(int64_t(o.min_bytes)) + " is more than the largest message, " +
                     std::to_string(int64_t(max_bytes)) + " bytes (--max-bytes)");
  }
  for (const GroupShape& shape : shapes) {
    std::set<double> measured;  // the sizes the sweep measures over this group
    for (double bytes : message_sizes(o.min_bytes, max_bytes)) {
      measured.insert(measured_message_bytes(bytes, shape.size));
    }
    if (measured.size() < 2) {
      throw InputError("--min-bytes and --max-bytes leave one message size over groups of " +
                       std::to_string(shape.size) + " (" + std::to_string(int64_t(*measured.begin())) +
                       " bytes, whole floats over the ranks): a latency and bandwidth fit needs two");
    }
  }
  return max_bytes;
}

Launch checked_launch(const CalibrationOptions& o, int me, int64_t ranks) {
  Launch launch;
  launch.me = me;
  launch.ranks = ranks;
  launch.launcher_per_node = launcher_ranks_per_node();
  launch.per_node = o.ranks_per_node > 0 ? o.ranks_per_node : launch.launcher_per_node;
  launch.shapes = checked_group_shapes(o, ranks, launch.per_node);
  launch.cuda_device = select_gpu();
  launch.gpu = launch.cuda_device >= 0;
  launch.blas_threads = std::max<int>(1, int(std::thread::hardware_concurrency() / launch.launcher_per_node));
  launch.max_bytes = checked_max_bytes(o, launch.gpu, launch.shapes);
  return launch;
}

// This rank's memory (its share of the host's, or its GPU's) and SMs; refuses a largest
// message whose buffers (send, receive and the check's host copies: about 4x) do not fit.
DeviceFacts checked_device_facts(const CalibrationOptions& o, const Launch& launch) {
  DeviceFacts device;
  device.memory_GiB = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)) /
                      double(1ull << 30) / double(launch.launcher_per_node);
#ifdef AXO_WITH_CUDA
  if (launch.gpu) {
    size_t free_bytes = 0, total_bytes = 0;
    cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    device.memory_GiB = double(total_bytes) / double(1ull << 30);
    device.sm_count = cuda::sm_count(launch.cuda_device);
  }
#endif
  if (!o.ops.empty() && 4 * launch.max_bytes > device.memory_GiB * double(1ull << 30)) {
    char text[200];
    std::snprintf(text, sizeof text, "--max-bytes %.0f: its collectives need about 4 x that in buffers, more than "
                  "the %.1f GiB of memory per rank here", launch.max_bytes, device.memory_GiB);
    throw InputError(text);
  }
  return device;
}

// What the sweep has measured so far (a timeout writes it as a partial profile), under `lock`.
struct Measured {
  std::vector<GemmSample> gemms;
  MemoryRates memory;
  std::vector<Measurement> measurements;
  OverlapMeasurement overlap{.efficiency = 1.0};  // until measured (GPUs: NCCL runs on its own stream)
  std::mutex lock;
};

// Writes profiles of what is measured, with the launch's metadata (asked of MPI on the
// main thread: the watchdog's thread writes profiles too).
class ProfileWriter {
 public:
  ProfileWriter(const CalibrationOptions& o, const Launch& launch, const DeviceFacts& device)
      : o_(o), launch_(launch), device_(device), name_(o.name.empty() ? "calibrated-" + host_name() : o.name),
        host_(host_name()), mpi_version_(mpi_version()), cpu_backend_(cpu_backend()) {}

  // The profile of `m` (the caller holds m.lock).
  MachineProfile profile(const Measured& m) const {
    MachineProfile profile = build_profile(name_, launch_.gpu, launch_.per_node, m.gemms, m.memory, m.measurements,
                                           device_);
    profile.overlap_efficiency = m.overlap.efficiency;
    profile.gpus_per_host = hosts_gpus(launch_.launcher_per_node, launch_.per_node);
    profile.source = "axo calibrate, " + std::to_string(launch_.ranks) + " ranks on " + host_ + ", " + utc_now();
    return profile;
  }

  // The profile of `m`, written to --out (the caller holds m.lock): a partial one by the rank
  // that failed or timed out, the whole one by rank 0.
  MachineProfile write(const Measured& m, bool complete, const std::string& error) const {
    const MachineProfile written = profile(m);
    if (!o_.out.empty()) {
      YAML::Emitter out;
      out << to_yaml(written, extra(m, complete, error));
      write_file_atomically(o_.out, std::string(out.c_str()) + "\n");
    }
    return written;
  }

 private:
  YAML::Node extra(const Measured& m, bool complete, const std::string& error) const {
    YAML::Node extra;
    YAML::Node metadata = extra["metadata"];
    metadata["date"] = utc_now();
    metadata["host"] = host_;
    metadata["ranks"] = launch_.ranks;
    metadata["ranks_per_node"] = launch_.per_node;
    metadata["launcher_ranks_per_node"] = launch_.launcher_per_node;
    metadata["backend"] = launch_.gpu ? "gpu (NCCL + cuBLAS)" : cpu_backend_;
    metadata["blas_threads_per_rank"] = launch_.blas_threads;
    metadata["blas"] = openblas_get_config();
    metadata["mpi"] = mpi_version_;
    metadata["complete"] = complete;
    if (!error.empty()) metadata["error"] = error;
    extra["raw"] = raw_tables(m.measurements, m.gemms, m.memory);
    if (!launch_.gpu) {
      extra["raw"]["overlap"]["gemm_s"] = m.overlap.gemm_s;
      extra["raw"]["overlap"]["all_gather_s"] = m.overlap.collective_s;
      extra["raw"]["overlap"]["all_gather_under_gemm_s"] = m.overlap.overlapped_s;
    }
    return extra;
  }

  static std::string mpi_version() {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int version_length = 0;
    MPI_Get_library_version(version, &version_length);
    return std::string(version).substr(0, 120);  // its length counts the final NUL
  }

  static std::string cpu_backend() {
    return std::string("cpu (MPI; fp32 GEMMs in ") + cpu::to_string(cpu::fp32_gemm_backend()) +
           ", bf16 GEMMs in oneDNN " + cpu::onednn_version() + ", fp16 GEMMs widened to fp32)";
  }

  const CalibrationOptions& o_;
  const Launch& launch_;
  const DeviceFacts& device_;
  const std::string name_, host_, mpi_version_, cpu_backend_;
};

// Stores `value` in `field` of `m` under its lock (a timeout writes what is measured so far).
template <typename T>
void store(Measured& m, T& field, T value) {
  std::lock_guard<std::mutex> lock(m.lock);
  field = std::move(value);
}

// The memory, GEMM and (CPU ranks) element-wise and overlap rates, each stored as measured.
void measure_rates(MpiCommunicator& world, const CalibrationOptions& o, const Launch& launch, Measured& m,
                   Watchdog& watchdog) {
  const bool root = launch.me == 0;
  if (root) progress("calibrate: memory copy and AdamW");
  MemoryRates memory = measure_memory(world, o.timeout_s, &watchdog);
  store(m, m.memory, memory);
  if (root) progress(launch.gpu ? "calibrate: cuBLAS GEMM grid and device links" : "calibrate: GEMM grid");
#ifdef AXO_WITH_CUDA
  if (launch.gpu) {
    store(m, m.gemms, measure_gpu_gemms(world, gpu_gemm_shapes(o.quick, o.extra_gemms), o.timeout_s, &watchdog));
    const DeviceRates device = measure_device_memory(world, o.timeout_s, &watchdog);
    memory.copy_GBps = device.copy_GBps;
    memory.host_to_device_GBps = device.host_to_device_GBps;
    memory.device_to_host_GBps = device.device_to_host_GBps;
    store(m, m.memory, memory);
  }
#endif
  if (!launch.gpu) {
    store(m, m.gemms, measure_gemms(world, gemm_shapes(o.quick, o.extra_gemms), o.timeout_s, &watchdog));
    if (root) progress("calibrate: element-wise kernels");
    memory.elementwise_GBps = measure_elementwise_GBps(world, o.timeout_s, &watchdog);
    store(m, m.memory, memory);
    if (root) progress("calibrate: collective under compute (overlap efficiency)");
    store(m, m.overlap, measure_overlap(world, o.timeout_s, &watchdog));
  }
}

// Every op of --ops over every group shape, at every message size; prints each as measured.
void measure_collectives(MpiCommunicator& world, const CalibrationOptions& o, const Launch& launch, Measured& m,
                         Watchdog& watchdog) {
  const auto sizes = message_sizes(o.min_bytes, launch.max_bytes);
  size_t done = 0;
  const size_t total = measured_pairs(launch.shapes, o.ops);
  for (const GroupShape& shape : launch.shapes) {
    std::unique_ptr<Communicator> group =
        world.split(int(group_index(shape, launch.me)), int(group_position(shape, launch.me)));
    CollectiveBench bench{&world, group.get(), shape, o.iterations, o.timeout_s, &watchdog, o.fault};
#ifdef AXO_WITH_CUDA
    if (launch.gpu) {  // the executor's GPU path: NCCL over device buffers
      group = std::make_unique<cuda::NcclCommunicator>(static_cast<MpiCommunicator&>(*group).comm());
      bench.group = group.get();
      bench.space = &device_memory();
    }
#endif
    for (CollectiveOp op : o.ops) {
      if (!measures(op, shape)) continue;
      ++done;
      for (size_t i = 0; i < sizes.size(); ++i) {
        // Sizes below a float per rank round up to one: each measured size once.
        if (i > 0 && measured_message_bytes(sizes[i], shape.size) == measured_message_bytes(sizes[i - 1], shape.size)) {
          continue;
        }
        if (launch.me == 0 && (i == 0 || isatty(fileno(stderr)))) {
          progress(collective_progress(done, total, op, shape, sizes, i));
        }
        const Measurement measurement = measure(bench, op, sizes[i]);
        if (launch.me == 0 && i == 0) print_header(measurement);
        if (launch.me == 0) print_row(measurement);
        std::lock_guard<std::mutex> lock(m.lock);
        m.measurements.push_back(measurement);
      }
    }
  }
}

}  // namespace

MachineProfile run_calibration(const CalibrationOptions& o) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const Launch launch = checked_launch(o, world.rank(), world.size());
  cpu::set_gemm_threads(launch.blas_threads);
  const DeviceFacts device = checked_device_facts(o, launch);
  const ProfileWriter writer(o, launch, device);
  Measured measured;
  // A timeout writes what was measured and ends this process (mpirun stops the rest).
  Watchdog watchdog(launch.me, [&](const std::string& message) {
    std::lock_guard<std::mutex> lock(measured.lock);
    writer.write(measured, false, message);
    std::fprintf(stderr, "axo calibrate: wrote the partial profile to %s; stopping\n", o.out.c_str());
  });
  try {
    measure_rates(world, o, launch, measured, watchdog);
    measure_collectives(world, o, launch, measured, watchdog);
  } catch (const CalibrationError& e) {
    std::fprintf(stderr, "\naxo calibrate: %s\n", e.what());
    {
      std::lock_guard<std::mutex> lock(measured.lock);
      writer.write(measured, false, e.what());
    }
    std::fprintf(stderr, "axo calibrate: wrote the partial profile to %s; stopping every rank\n", o.out.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (launch.me == 0) progress("calibrate: done");
  if (launch.me == 0 && isatty(fileno(stderr))) std::fprintf(stderr, "\n");
  std::lock_guard<std::mutex> lock(measured.lock);
  return launch.me == 0 ? writer.write(measured, true, "") : writer.profile(measured);
}

}  // namespace axo::calibration
