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
  p.peak_tflops_fp32 = std::max(best(Precision::fp32), 1e-9);
  auto measured_or_fp32 = [&](Precision precision) {
    return best(precision) > 0 ? std::max(best(precision), 1e-9) : p.peak_tflops_fp32;
  };
  p.peak_tflops_bf16 = gpu ? std::max(best(Precision::bf16), 1e-9) : measured_or_fp32(Precision::bf16);
  p.peak_tflops_fp16 = gpu ? std::max(p.peak_tflops_bf16, best(Precision::fp16)) : measured_or_fp32(Precision::fp16);
  p.gemm_max_efficiency = 1.0;  // peak is the best measured rate; the table corrects the rest
  p.gemm_table = gemms;
  p.hbm_bandwidth_GBps = std::max(memory.copy_GBps, 1e-6);
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

MachineProfile run_calibration(const CalibrationOptions& o) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const int me = world.rank();
  const int64_t ranks = world.size();
  if (ranks < 2) {
    throw InputError("calibration needs at least 2 ranks: run it as mpirun -np N axo calibrate ...");
  }
  const int64_t launcher_per_node = launcher_ranks_per_node();
  [[maybe_unused]] int cuda_device = -1;
  const int64_t per_node = o.ranks_per_node > 0 ? o.ranks_per_node : launcher_per_node;
  if (ranks % per_node != 0) {
    throw InputError("--ranks-per-node " + std::to_string(per_node) + " does not divide the " +
                     std::to_string(ranks) + " ranks of this launch");
  }
  // The groups the sweep measures (none without collectives to measure).
  const std::vector<GroupShape> shapes = o.ops.empty() ? std::vector<GroupShape>{} : group_shapes(ranks, per_node);
  if (!o.ops.empty() && shapes.empty()) {
    throw InputError("calibration measures groups of 2, 4, 8... ranks that tile the launch; none tiles " +
                     std::to_string(ranks) + " ranks: launch an even number (mpirun -np 2, 4, 8 ...)");
  }
  if (o.fault.hang_rank >= ranks) {
    throw InputError("--inject-fault hang:" + std::to_string(o.fault.hang_rank) + ": this launch has ranks 0 to " +
                     std::to_string(ranks - 1));
  }
#ifdef AXO_WITH_CUDA
  const bool gpu = cuda::device_count() > 0;
  if (gpu) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local_rank = 0;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    cuda_device = cuda::select_device(local_rank);
  }
#else
  const bool gpu = false;
#endif
  // BLAS threads: the cores of this host shared by the ranks on it.
  const int threads = std::max<int>(1, int(std::thread::hardware_concurrency() / launcher_per_node));
  cpu::set_gemm_threads(threads);
  const double max_bytes =
      o.max_bytes > 0 ? o.max_bytes : (gpu ? (o.quick ? 16.0 : 256.0) : (o.quick ? 4.0 : 64.0)) * (1 << 20);
  if (o.min_bytes > max_bytes) {
    throw InputError("--min-bytes " + std::to_string(int64_t(o.min_bytes)) + " is more than the largest message, " +
                     std::to_string(int64_t(max_bytes)) + " bytes (--max-bytes)");
  }
  for (const GroupShape& shape : shapes) {
    std::set<double> measured;  // the sizes the sweep measures over this group
    for (double bytes : message_sizes(o.min_bytes, max_bytes)) measured.insert(measured_message_bytes(bytes, shape.size));
    if (measured.size() < 2) {
      throw InputError("--min-bytes and --max-bytes leave one message size over groups of " +
                       std::to_string(shape.size) + " (" + std::to_string(int64_t(*measured.begin())) +
                       " bytes, whole floats over the ranks): a latency and bandwidth fit needs two");
    }
  }
  const std::string name = o.name.empty() ? "calibrated-" + host_name() : o.name;  // main thread
  DeviceFacts device;
  device.memory_GiB = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)) /
                      double(1ull << 30) / double(launcher_per_node);
#ifdef AXO_WITH_CUDA
  if (gpu) {
    size_t free_bytes = 0, total_bytes = 0;
    cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    device.memory_GiB = double(total_bytes) / double(1ull << 30);
    device.sm_count = cuda::sm_count(cuda_device);
  }
#endif
  // A message's send and receive buffers and the check's host copies: about 4 times its bytes.
  if (!o.ops.empty() && 4 * max_bytes > device.memory_GiB * double(1ull << 30)) {
    char text[200];
    std::snprintf(text, sizeof text, "--max-bytes %.0f: its collectives need about 4 x that in buffers, more than "
                  "the %.1f GiB of memory per rank here", max_bytes, device.memory_GiB);
    throw InputError(text);
  }

  std::vector<GemmSample> gemms;
  MemoryRates memory;
  std::vector<Measurement> measurements;
  OverlapMeasurement overlap;
  overlap.efficiency = 1.0;  // until measured (GPUs: NCCL runs on its own stream)
  // Asked of MPI here, on the main thread: the watchdog's thread writes profiles too.
  const std::string host = host_name();
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int version_length = 0;
  MPI_Get_library_version(version, &version_length);
  const std::string mpi_version = std::string(version).substr(0, 120);  // its length counts the final NUL
  const std::string cpu_backend = std::string("cpu (MPI; fp32 GEMMs in ") + cpu::to_string(cpu::fp32_gemm_backend()) +
                                  ", bf16 GEMMs in oneDNN " + cpu::onednn_version() +
                                  ", fp16 GEMMs widened to fp32)";
  auto write_profile = [&](bool complete, const std::string& error) {
    MachineProfile profile = build_profile(name, gpu, per_node, gemms, memory, measurements, device);
    profile.overlap_efficiency = overlap.efficiency;
    profile.gpus_per_host = hosts_gpus(launcher_per_node, per_node);
    YAML::Node extra;
    extra["metadata"]["date"] = utc_now();
    extra["metadata"]["host"] = host;
    extra["metadata"]["ranks"] = ranks;
    extra["metadata"]["ranks_per_node"] = per_node;
    extra["metadata"]["launcher_ranks_per_node"] = launcher_per_node;
    extra["metadata"]["backend"] = gpu ? "gpu (NCCL + cuBLAS)" : cpu_backend;
    extra["metadata"]["blas_threads_per_rank"] = threads;
    extra["metadata"]["blas"] = openblas_get_config();
    extra["metadata"]["mpi"] = mpi_version;
    extra["metadata"]["complete"] = complete;
    if (!error.empty()) extra["metadata"]["error"] = error;
    extra["raw"] = raw_tables(measurements, gemms, memory);
    if (!gpu) {
      extra["raw"]["overlap"]["gemm_s"] = overlap.gemm_s;
      extra["raw"]["overlap"]["all_gather_s"] = overlap.collective_s;
      extra["raw"]["overlap"]["all_gather_under_gemm_s"] = overlap.overlapped_s;
    }
    profile.source = "axo calibrate, " + std::to_string(ranks) + " ranks on " + host + ", " + utc_now();
    if (!o.out.empty()) {
      YAML::Emitter out;
      out << to_yaml(profile, extra);
      write_file_atomically(o.out, std::string(out.c_str()) + "\n");
    }
    return profile;
  };

  // A timeout writes what was measured and ends this process (mpirun stops the rest).
  std::mutex measured;
  Watchdog watchdog(me, [&](const std::string& message) {
    std::lock_guard<std::mutex> lock(measured);
    write_profile(false, message);
    std::fprintf(stderr, "axo calibrate: wrote the partial profile to %s; stopping\n", o.out.c_str());
  });
  try {
    if (me == 0) progress("calibrate: memory copy and AdamW");
    memory = measure_memory(world, o.timeout_s, &watchdog);
    if (me == 0) progress(gpu ? "calibrate: cuBLAS GEMM grid and device links" : "calibrate: GEMM grid");
#ifdef AXO_WITH_CUDA
    if (gpu) {
      gemms = measure_gpu_gemms(world, gpu_gemm_shapes(o.quick, o.extra_gemms), o.timeout_s, &watchdog);
      const DeviceRates device = measure_device_memory(world, o.timeout_s, &watchdog);
      memory.copy_GBps = device.copy_GBps;
      memory.host_to_device_GBps = device.host_to_device_GBps;
      memory.device_to_host_GBps = device.device_to_host_GBps;
    }
#endif
    if (!gpu) {
      gemms = measure_gemms(world, gemm_shapes(o.quick, o.extra_gemms), o.timeout_s, &watchdog);
      if (me == 0) progress("calibrate: element-wise kernels");
      const double elementwise_GBps = measure_elementwise_GBps(world, o.timeout_s, &watchdog);
      if (me == 0) progress("calibrate: collective under compute (overlap efficiency)");
      const OverlapMeasurement measured_overlap = measure_overlap(world, o.timeout_s, &watchdog);
      std::lock_guard<std::mutex> lock(measured);
      memory.elementwise_GBps = elementwise_GBps;
      overlap = measured_overlap;
    }
    const auto sizes = message_sizes(o.min_bytes, max_bytes);
    size_t done = 0;
    const size_t total = measured_pairs(shapes, o.ops);
    for (const GroupShape& shape : shapes) {
      std::unique_ptr<Communicator> group =
          world.split(int(group_index(shape, me)), int(group_position(shape, me)));
      CollectiveBench bench{&world, group.get(), shape, o.iterations, o.timeout_s, &watchdog, o.fault};
#ifdef AXO_WITH_CUDA
      if (gpu) {  // the executor's GPU path: NCCL over device buffers
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
          if (me == 0 && (i == 0 || isatty(fileno(stderr)))) {
            progress(collective_progress(done, total, op, shape, sizes, i));
          }
          const Measurement m = measure(bench, op, sizes[i]);
          if (me == 0 && i == 0) print_header(m);
          if (me == 0) print_row(m);
          std::lock_guard<std::mutex> lock(measured);
          measurements.push_back(m);
        }
      }
    }
  } catch (const CalibrationError& e) {
    std::fprintf(stderr, "\naxo calibrate: %s\n", e.what());
    write_profile(false, e.what());
    std::fprintf(stderr, "axo calibrate: wrote the partial profile to %s; stopping every rank\n", o.out.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (me == 0) progress("calibrate: done");
  if (me == 0 && isatty(fileno(stderr))) std::fprintf(stderr, "\n");
  MachineProfile profile = me == 0 ? write_profile(true, "") : build_profile(name, gpu, per_node, gemms, memory, measurements, device);
  return profile;
}

}  // namespace axo::calibration
