// GEMM, copy and AdamW rates (see compute_bench.h).
#include "calibrate/compute_bench.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "executor/cpu/adamw.h"
#include "executor/cpu/gemm.h"
#include "executor/cpu/ops.h"

namespace axo::calibration {

double slowest_seconds_per_run(Communicator& world, double timeout_s, Watchdog* watchdog,
                               const std::string& what, double min_seconds, const std::function<void()>& work) {
  const Deadline deadline(watchdog, timeout_s, what);
  work();  // warm-up
  int64_t runs = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  while (runs < 2 || elapsed < min_seconds) {
    work();
    ++runs;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  std::vector<float> all(size_t(world.size()), 0.0f);
  all[size_t(world.rank())] = float(elapsed / double(runs));
  world.all_reduce(all.data(), all.size());
  return double(*std::max_element(all.begin(), all.end()));
}

std::vector<GemmShape> gemm_shapes(bool quick, const std::vector<GemmShape>& extra) {
  return gemm_grid(quick ? std::vector<int64_t>{128, 512, 1024} : std::vector<int64_t>{64, 256, 512, 1024, 2048},
                   extra);
}

std::vector<GemmShape> gemm_grid(const std::vector<int64_t>& sizes, const std::vector<GemmShape>& extra) {
  std::vector<GemmShape> shapes;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : sizes) shapes.push_back({m, n, k});
  for (const GemmShape& s : extra) {  // each shape once: a profile refuses two samples of one
    const auto same = [&](const GemmShape& t) { return t.m == s.m && t.n == s.n && t.k == s.k; };
    if (std::none_of(shapes.begin(), shapes.end(), same)) shapes.push_back(s);
  }
  return shapes;
}

namespace {

// A training step reads each GEMM's operands from memory: other ops ran
// since they were last touched. So runs rotate over enough copies of A, B
// and C (64 MiB in all, more than a last-level cache) that none is cached;
// the same GEMM repeated on one set runs 35-55% faster at 128-512 sizes here.
// A and B are fp32, or 2-byte (bf16, fp16) run by gemm_half; C is fp32.
double gemm_tflops(Communicator& world, const GemmShape& s, Precision precision, double timeout_s,
                   Watchdog* watchdog) {
  constexpr double kRotationBytes = 64.0 * (1 << 20);
  const bool wide = precision == Precision::fp32;
  const cpu::HalfFormat format = wide ? cpu::HalfFormat::bf16 : cpu::half_format(precision);
  const size_t a_size = size_t(s.m * s.k), b_size = size_t(s.k * s.n), c_size = size_t(s.m * s.n);
  const double set_bytes = double(a_size + b_size) * (wide ? 4 : 2) + double(c_size) * sizeof(float);
  const size_t sets = size_t(std::clamp(std::ceil(kRotationBytes / set_bytes), 1.0, 64.0));
  // One of the two is used: fp32 operands, or 2-byte ones.
  std::vector<std::vector<float>> a(wide ? sets : 0, std::vector<float>(a_size, 0.5f));
  std::vector<std::vector<float>> b(wide ? sets : 0, std::vector<float>(b_size, 0.25f));
  std::vector<std::vector<cpu::Half>> a16(wide ? 0 : sets, std::vector<cpu::Half>(a_size, cpu::to_half(0.5f, format)));
  std::vector<std::vector<cpu::Half>> b16(wide ? 0 : sets, std::vector<cpu::Half>(b_size, cpu::to_half(0.25f, format)));
  std::vector<std::vector<float>> c(sets, std::vector<float>(c_size, 0.0f));
  size_t next = 0;
  const std::string what = std::string("GEMM ") + to_string(precision) + " " + std::to_string(s.m) + "x" +
                           std::to_string(s.n) + "x" + std::to_string(s.k);
  const double seconds = slowest_seconds_per_run(world, timeout_s, watchdog, what, 0.05, [&] {
    const size_t i = next++ % sets;
    if (wide) {
      cpu::gemm(false, false, s.m, s.n, s.k, 1.0f, a[i].data(), s.k, b[i].data(), s.n, 0.0f, c[i].data(), s.n);
    } else {
      cpu::gemm_half(format, false, false, s.m, s.n, s.k, 1.0f, a16[i].data(), s.k, b16[i].data(), s.n, 0.0f,
                     c[i].data(), s.n);
    }
  });
  return 2.0 * double(s.m * s.n * s.k) / seconds / 1e12;
}

}  // namespace

std::vector<GemmSample> measure_gemms(Communicator& world, const std::vector<GemmShape>& shapes,
                                      double timeout_s, Watchdog* watchdog) {
  std::vector<GemmSample> samples;
  for (const GemmShape& s : shapes) {
    for (Precision precision : {Precision::fp32, Precision::bf16, Precision::fp16}) {
      samples.push_back({precision, s.m, s.n, s.k, gemm_tflops(world, s, precision, timeout_s, watchdog)});
    }
  }
  return samples;
}

// One layer's kernels on [rows, C] activations (4 MiB per tensor), with the
// cost model's byte counts: a LayerNorm and a GELU move two tensors forward
// (read, write), a residual add three, and each backward 1.5x its forward
// (CostModel::compute_local).
double measure_elementwise_GBps(Communicator& world, double timeout_s, Watchdog* watchdog) {
  const int64_t C = 256, rows = 4096, n = rows * C;
  std::vector<float> in(size_t(n), 0.5f), out(size_t(n), 0.0f), other(size_t(n), 0.25f), dout(size_t(n), 1e-3f);
  std::vector<float> din(size_t(n), 0.0f), dother(size_t(n), 0.0f);
  std::vector<float> weight(size_t(C), 1.0f), bias(size_t(C), 0.0f), dweight(size_t(C), 0.0f), dbias(size_t(C), 0.0f);
  std::vector<float> mean(size_t(rows), 0.0f), rstd(size_t(rows), 0.0f);
  for (int64_t i = 0; i < n; ++i) in[size_t(i)] = float(i % 97) / 97.0f - 0.5f;
  const double seconds = slowest_seconds_per_run(world, timeout_s, watchdog, "element-wise kernels", 0.2, [&] {
    cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), in.data(), weight.data(), bias.data(), rows, C);
    cpu::layernorm_backward(din.data(), dweight.data(), dbias.data(), dout.data(), in.data(), weight.data(),
                            mean.data(), rstd.data(), rows, C);
    cpu::gelu_forward(out.data(), in.data(), n);
    cpu::gelu_backward(din.data(), dout.data(), in.data(), n);
    cpu::residual_forward(out.data(), in.data(), other.data(), n);
    cpu::residual_backward(din.data(), dother.data(), dout.data(), n);
  });
  const double forward_tensors = 2 + 2 + 3;
  return 2.5 * forward_tensors * double(n) * sizeof(float) / seconds / 1e9;
}

MemoryRates measure_memory(Communicator& world, double timeout_s, Watchdog* watchdog) {
  MemoryRates rates;
  const size_t n = size_t(16) << 20;  // 64 MiB of floats
  std::vector<float> a(n, 1.0f), b(n, 2.0f);
  const double copy = slowest_seconds_per_run(world, timeout_s, watchdog, "memory copy", 0.2, [&] { std::memcpy(b.data(), a.data(), n * 4); });
  rates.host_to_device_GBps = rates.device_to_host_GBps = double(n * 4) / copy / 1e9;
  rates.copy_GBps = 2.0 * double(n * 4) / copy / 1e9;
  const size_t params = size_t(4) << 20;
  std::vector<float> theta(params, 0.1f), grad(params, 0.01f), m(params, 0.0f), v(params, 0.0f);
  long step = 0;
  const double adam = slowest_seconds_per_run(world, timeout_s, watchdog, "AdamW step", 0.2, [&] {
    cpu::adamw_update(theta.data(), grad.data(), m.data(), v.data(), params, cpu::AdamWSettings{}, ++step);
  });
  rates.adam_params_per_s = double(params) / adam;
  return rates;
}

double memory_bound_efficiency(const MemoryRates& rates) {
  if (rates.elementwise_GBps <= 0 || rates.copy_GBps <= 0) return 1.0;
  return std::clamp(rates.elementwise_GBps / rates.copy_GBps, 1e-3, 1.0);
}

}  // namespace axo::calibration
