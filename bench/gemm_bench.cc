// The CPU GEMM candidates on GPT-2 124M-shaped layers, measured in the same
// run: OpenBLAS's sgemm, oneDNN's fp32 matmul and oneDNN's bf16 matmul (bf16
// A and B, fp32 accumulation and C), each through cpu::gemm's interface.
//   build/bench/gemm_bench [seconds per shape, default 1] [tokens ..., default 1024 8192]
//
// One transformer block's linears (C = 768): qkv C→3C, attention projection
// C→C, MLP up C→4C, MLP down 4C→C; each in the executor's three GEMMs
// (executor/parallel/linear_4d.cc): forward Y[m,n] = X[m,k]·Wᵀ (NT), dX[m,k] =
// dY[m,n]·W (NN), dW[n,k] += dYᵀ·X (TN, beta 1), m the tokens; and TT on the
// forward's shape for the fourth transpose combination. The backends take
// turns on each shape; each figure is the median call's GFLOP/s (2·m·n·k flops).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "executor/cpu/gemm.h"
#include "executor/cpu/onednn_matmul.h"

namespace {

using namespace axo::cpu;
using Clock = std::chrono::steady_clock;

struct Shape {
  std::string name;
  bool ta, tb;
  int64_t m, n, k;
  float beta;
};

std::vector<Shape> block_shapes(int64_t tokens) {
  struct Linear {
    const char* name;
    int64_t in, out;
  };
  const int64_t C = 768;
  std::vector<Shape> shapes;
  for (const Linear& l : {Linear{"qkv", C, 3 * C}, {"attn proj", C, C}, {"mlp up", C, 4 * C}, {"mlp down", 4 * C, C}}) {
    shapes.push_back({std::string(l.name) + " fwd NT", false, true, tokens, l.out, l.in, 0});
    shapes.push_back({std::string(l.name) + " dX NN", false, false, tokens, l.in, l.out, 0});
    shapes.push_back({std::string(l.name) + " dW TN", true, false, l.out, l.in, tokens, 1});
    shapes.push_back({std::string(l.name) + " fwd TT", true, true, tokens, l.out, l.in, 0});
  }
  return shapes;
}

constexpr int kBackends = 3;  // OpenBLAS fp32, oneDNN fp32, oneDNN bf16
const char* const kBackendNames[kBackends] = {"OpenBLAS f32", "oneDNN f32", "oneDNN bf16"};

struct Result {
  double seconds[kBackends];  // median call
};

// n values in [-0.5, 0.5), spread by a multiplicative hash of the index.
std::vector<float> spread_values(size_t n, uint32_t salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float((uint32_t(i) * 2654435761u + salt) % 1000u) / 1000.0f - 0.5f;
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Result measure(const Shape& s, double seconds_per_shape) {
  // Operands as stored: A [m,k] or [k,m], B [k,n] or [n,k], packed.
  const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n, ldc = s.n;
  const std::vector<float> a = spread_values(size_t(s.m * s.k), 1);
  const std::vector<float> b = spread_values(size_t(s.k * s.n), 2);
  std::vector<Half> a16(a.size()), b16(b.size());
  to_half(a.data(), a16.data(), int64_t(a.size()), HalfFormat::bf16);
  to_half(b.data(), b16.data(), int64_t(b.size()), HalfFormat::bf16);
  std::vector<float> c(size_t(s.m * s.n), 0.0f);
  auto call = [&](int backend) {
    if (backend == 2) {
      gemm_half(HalfFormat::bf16, s.ta, s.tb, s.m, s.n, s.k, 1, a16.data(), lda, b16.data(), ldb, s.beta, c.data(),
                ldc);
    } else {
      gemm(backend == 0 ? GemmBackend::openblas : GemmBackend::onednn, s.ta, s.tb, s.m, s.n, s.k, 1, a.data(), lda,
           b.data(), ldb, s.beta, c.data(), ldc);
    }
  };
  std::vector<double> times[kBackends];
  for (int backend = 0; backend < kBackends; ++backend) call(backend);  // warm-up: primitives, pages, threads
  const auto start = Clock::now();
  while (times[0].size() < 3 || std::chrono::duration<double>(Clock::now() - start).count() < seconds_per_shape) {
    for (int backend = 0; backend < kBackends; ++backend) {
      const auto t0 = Clock::now();
      call(backend);
      times[backend].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  Result r;
  for (int backend = 0; backend < kBackends; ++backend) r.seconds[backend] = median(times[backend]);
  return r;
}

std::string implementations(const Shape& s) {
  MatmulCall call{MatmulType::f32, MatmulType::f32, s.ta, s.tb, s.m, s.n, s.k, 1, s.beta};
  call.lda = s.ta ? s.m : s.k, call.ldb = s.tb ? s.k : s.n, call.ldc = s.n;
  std::string f32 = onednn_matmul_implementation(call);
  call.ab_type = MatmulType::bf16;
  return f32 + " / " + onednn_matmul_implementation(call);
}

void run_tokens(int64_t tokens, double seconds_per_shape) {
  std::printf("\n%lld tokens: GFLOP/s (median call)\n", (long long)tokens);
  std::printf("%-18s %5s %5s %5s %13s %13s %13s %10s %10s  %s\n", "GEMM", "m", "n", "k", kBackendNames[0],
              kBackendNames[1], kBackendNames[2], "dnnl/blas", "bf16/f32", "oneDNN f32 / bf16 implementation");
  double flops_total = 0, seconds_total[kBackends] = {};
  for (const Shape& s : block_shapes(tokens)) {
    const Result r = measure(s, seconds_per_shape);
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    double rate[kBackends];
    for (int i = 0; i < kBackends; ++i) rate[i] = flops / r.seconds[i] / 1e9;
    std::printf("%-18s %5lld %5lld %5lld %13.1f %13.1f %13.1f %10.2f %10.2f  %s\n", s.name.c_str(), (long long)s.m,
                (long long)s.n, (long long)s.k, rate[0], rate[1], rate[2], rate[1] / rate[0],
                rate[2] / std::max(rate[0], rate[1]), implementations(s).c_str());
    if (s.name.find("TT") != std::string::npos) continue;  // the executor's three uses make the step
    flops_total += flops;
    for (int i = 0; i < kBackends; ++i) seconds_total[i] += r.seconds[i];
  }
  double rate[kBackends];
  for (int i = 0; i < kBackends; ++i) rate[i] = flops_total / seconds_total[i] / 1e9;
  std::printf("%-36s %13.1f %13.1f %13.1f %10.2f %10.2f\n", "block (fwd+dX+dW, all flops / all time)", rate[0], rate[1],
              rate[2], rate[1] / rate[0], rate[2] / std::max(rate[0], rate[1]));
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds_per_shape = argc > 1 ? std::stod(argv[1]) : 1.0;
  std::vector<int64_t> token_counts;
  for (int i = 2; i < argc; ++i) token_counts.push_back(std::stoll(argv[i]));
  if (token_counts.empty()) token_counts = {4 * 256, 8 * 1024};
  const int threads = std::max(1, int(std::thread::hardware_concurrency()));
  set_gemm_threads(threads);
  std::printf("gemm_bench: %d threads; gemm() uses %s for fp32; bf16/f32 is against the faster fp32\n", threads,
              to_string(fp32_gemm_backend()));
  for (int64_t tokens : token_counts) run_tokens(tokens, seconds_per_shape);
}
