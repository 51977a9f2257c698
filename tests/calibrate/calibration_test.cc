// A real (short) calibration under mpirun: the profile it writes loads, the
// planner runs on it, bandwidth grows with message size, and the fits
// reproduce the measured times.
// axo-test-ranks: 2 4
// axo-test-serial
#include "calibrate/calibration.h"

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "calibrate/fit.h"
#include "model/presets.h"
#include "model/yaml_fields.h"
#include "planner/search.h"

namespace axo::calibration {
namespace {

std::string shared_path() {
  int id = ::getpid();
  MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return (std::filesystem::temp_directory_path() / ("axo_calibration_" + std::to_string(id) + ".yaml")).string();
}

TEST(Calibration, ShortRunWritesAUsableProfile) {
  CalibrationOptions options;
  options.out = shared_path();
  options.quick = true;
  options.min_bytes = 1024;
  options.max_bytes = 1 << 20;
  options.iterations = 10;
  options.timeout_s = 120;
  const MachineProfile profile = run_calibration(options);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;

  const MachineProfile loaded = load_machine_profile(options.out);
  EXPECT_EQ(loaded.backend, "cpu");
  EXPECT_EQ(loaded.collectives.size(), profile.collectives.size());
  EXPECT_GE(loaded.collectives.size(), 4u);
  EXPECT_GT(loaded.peak_tflops_fp32, 0);
  EXPECT_FALSE(loaded.gemm_table.empty());
  // The three CPU GEMM precisions, shape by shape; each precision's peak is its best rate.
  const Precision order[] = {Precision::fp32, Precision::bf16, Precision::fp16};
  std::map<Precision, double> best;
  for (size_t i = 0; i < loaded.gemm_table.size(); ++i) {
    const GemmSample& s = loaded.gemm_table[i];
    EXPECT_EQ(s.precision, order[i % 3]) << i;
    if (i % 3) {
      const GemmSample& fp32 = loaded.gemm_table[i - i % 3];
      EXPECT_TRUE(s.m == fp32.m && s.n == fp32.n && s.k == fp32.k) << i;
    }
    best[s.precision] = std::max(best[s.precision], s.tflops);
  }
  for (Precision p : order) EXPECT_GT(best[p], 0) << to_string(p);
  EXPECT_NEAR(loaded.peak_tflops_fp32, best[Precision::fp32], 1e-9 * best[Precision::fp32]);
  EXPECT_NEAR(loaded.peak_tflops_bf16, best[Precision::bf16], 1e-9 * best[Precision::bf16]);
  EXPECT_NEAR(loaded.peak_tflops_fp16, best[Precision::fp16], 1e-9 * best[Precision::fp16]);

  // Bus bandwidth grows with message size, and the fits reproduce the times.
  const YAML::Node root = load_yaml_file(options.out);
  ASSERT_TRUE(root["metadata"]["complete"].as<bool>());
  // The overlap measurement: its three times, and the efficiency they give.
  const YAML::Node overlap = root["raw"]["overlap"];
  ASSERT_TRUE(overlap.IsMap());
  const double gemm = overlap["gemm_s"].as<double>(), gather = overlap["all_gather_s"].as<double>();
  const double both = overlap["all_gather_under_gemm_s"].as<double>();
  EXPECT_GT(gemm, 0);
  EXPECT_GT(gather, 0);
  EXPECT_NEAR(loaded.overlap_efficiency, std::clamp((gemm + gather - both) / std::min(gemm, gather), 0.0, 1.0), 1e-9);
  // The element-wise kernels' rate sets the memory-bound efficiency: their
  // share of the copy bandwidth (at most all of it).
  const double elementwise = root["raw"]["memory"]["elementwise_GBps"].as<double>();
  const double copy = root["raw"]["memory"]["copy_GBps"].as<double>();
  EXPECT_GT(elementwise, 0);
  EXPECT_NEAR(loaded.memory_bound_efficiency, std::clamp(elementwise / copy, 1e-3, 1.0), 1e-9);
  std::map<std::string, std::vector<std::pair<double, double>>> busbw;  // per op and shape
  std::vector<double> errors;
  for (const YAML::Node& row : root["raw"]["collectives"]) {
    const std::string key = row["op"].as<std::string>() + "/" + row["group_size"].as<std::string>() +
                            "/" + row["ranks_per_node"].as<std::string>();
    busbw[key].push_back({row["bytes"].as<double>(), row["busbw_GBps"].as<double>()});
    const CollectiveOp op = parse_collective_op(row["op"].as<std::string>(), "raw");
    for (const CollectiveFit& fit : loaded.collectives) {
      if (fit.op == op && fit.group_size == row["group_size"].as<int64_t>() &&
          fit.ranks_per_node == row["ranks_per_node"].as<int64_t>()) {
        const double measured = row["time_us"].as<double>() * 1e-6;
        const double predicted = predicted_seconds(fit.segments, op, fit.group_size, row["bytes"].as<double>());
        errors.push_back(std::fabs(predicted - measured) / measured);
      }
    }
  }
  // Under AddressSanitizer every copy is instrumented and the ranks share two
  // cores: times say nothing about the links there, so only the rest is checked.
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool kTimesMeanSomething = false;
#else
  constexpr bool kTimesMeanSomething = true;
#endif
  for (const auto& [key, points] : busbw) {
    if (!kTimesMeanSomething) break;
    // From 1 KiB (latency-bound) to 1 MiB (bandwidth-bound) the bus bandwidth
    // grows: the best of the larger half of the sizes beats the smallest size.
    // Not the best of the smaller half: shared memory sends up to its eager
    // limit (4 KiB in Open MPI's sm transport) in one copy, so 4 KiB can run
    // faster per byte than 8-64 KiB (CI measured reduce_scatter 3.08 GB/s at
    // 4 KiB against 3.00 at best above 64 KiB).
    double large = 0;
    for (size_t i = points.size() / 2; i < points.size(); ++i) large = std::max(large, points[i].second);
    EXPECT_GT(large, points.front().second) << key;
  }
  // Stated tolerance: on this shared machine, the median point within 35% of its fit.
  ASSERT_FALSE(errors.empty());
  std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
  if (kTimesMeanSomething) {
    EXPECT_LT(errors[errors.size() / 2], 0.35);
  }

  // The planner plans on it.
  const CostModel model(load_model("gpt2-124m"), loaded);
  SearchOptions search_options;
  search_options.gpus = 4;
  const SearchResult result = search(model, search_options);
  EXPECT_FALSE(result.best.empty());
  std::filesystem::remove(options.out);
}

// A CPU profile's peaks come from each precision's own GEMM samples; without
// bf16 or fp16 samples (profiles calibrated before they were measured), those
// run at the fp32 rate.
TEST(Calibration, CpuPeaksPerPrecision) {
  const std::vector<GemmSample> all = {{Precision::fp32, 512, 512, 512, 0.15},
                                       {Precision::bf16, 512, 512, 512, 0.40},
                                       {Precision::fp16, 512, 512, 512, 0.12},
                                       {Precision::fp32, 1024, 1024, 1024, 0.20},
                                       {Precision::bf16, 1024, 1024, 1024, 0.45},
                                       {Precision::fp16, 1024, 1024, 1024, 0.17}};
  const MachineProfile p = build_profile("cpu", false, 1, all, MemoryRates{}, {}, {16, 0});
  EXPECT_DOUBLE_EQ(p.peak_tflops_fp32, 0.20);
  EXPECT_DOUBLE_EQ(p.peak_tflops_bf16, 0.45);
  EXPECT_DOUBLE_EQ(p.peak_tflops_fp16, 0.17);
  EXPECT_EQ(p.gemm_table.size(), 6u);
  EXPECT_EQ(p.activations, ActivationLayout::axo);  // it measured axo's executor: its plans hold its layout
  // and send what it sends: fp32 copies of 2-byte gradients, fp32 activations.
  EXPECT_EQ(p.reduce_dtype, ReduceDtype::fp32_copy);
  EXPECT_EQ(p.activation_comm_dtype, ActivationCommDtype::fp32);
  const MachineProfile fp32_only = build_profile("cpu", false, 1, {all[0], all[3]}, MemoryRates{}, {}, {16, 0});
  EXPECT_DOUBLE_EQ(fp32_only.peak_tflops_bf16, 0.20);
  EXPECT_DOUBLE_EQ(fp32_only.peak_tflops_fp16, 0.20);
}

// A GPU's SMs (calibrate reads them from the device) reach the profile, where
// the GEMM model quantizes over them; CPU ranks have none.
TEST(Calibration, TheDevicesMemoryAndSmsReachTheProfile) {
  const std::vector<GemmSample> gemms = {{Precision::bf16, 4096, 4096, 4096, 700}};
  const MachineProfile gpu = build_profile("gpu", true, 8, gemms, MemoryRates{}, {}, {79.2, 132});
  EXPECT_EQ(gpu.gemm_sm_count, 132);
  EXPECT_DOUBLE_EQ(gpu.device_memory_GiB, 79.2);
  EXPECT_EQ(build_profile("cpu", false, 1, gemms, MemoryRates{}, {}, {16, 0}).gemm_sm_count, 0);
}

// --ranks-per-node 64 over hosts of 4 (GB200's trays) makes a node of 16 hosts; nodes of one host
// (the launcher's ranks, or a part of them) leave gpus_per_host out.
TEST(Calibration, ANodeOfSeveralHostsRecordsAHostsDevices) {
  EXPECT_EQ(hosts_gpus(4, 64), 4);
  EXPECT_EQ(hosts_gpus(8, 8), 0);
  EXPECT_EQ(hosts_gpus(4, 2), 0);
  EXPECT_EQ(hosts_gpus(4, 6), 0);  // not whole hosts
}

}  // namespace
}  // namespace axo::calibration
