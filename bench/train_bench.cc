// Training speed of the CPU executor on GPT-2 124M-shaped layers (C = 768,
// 12 heads, the 50257-token vocabulary; 2 layers instead of 12 to keep the
// run short), and how much of this machine's BLAS GEMM rate a training
// step achieves, both measured in the same run:
//   build/bench/train_bench [steps] [batch] [seq]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "executor/cpu/adamw.h"
#include "executor/cpu/gemm.h"
#include "executor/gpt/gpt.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The BLAS rate on a large square GEMM (the ceiling a step can approach).
double blas_gflops() {
  const int64_t n = 1024;
  std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), c(size_t(n * n));
  axo::cpu::gemm(false, false, n, n, n, 1, a.data(), n, b.data(), n, 0, c.data(), n);
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    axo::cpu::gemm(false, false, n, n, n, 1, a.data(), n, b.data(), n, 0, c.data(), n);
    best = std::max(best, 2.0 * double(n * n * n) / seconds_since(start) / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::stoi(argv[1]) : 3;
  const int64_t B = argc > 2 ? std::stoll(argv[2]) : 4;
  const int64_t T = argc > 3 ? std::stoll(argv[3]) : 256;
  const axo::GptShape shape{2, 12, 768, 1024, 50257, 50304};
  axo::Gpt model(shape);
  model.initialize(1);
  std::vector<float> m(model.parameters().size()), v(model.parameters().size());
  std::vector<int> inputs(size_t(B * T)), targets(size_t(B * T));
  std::mt19937 rng(1);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = int(rng() % 50257), targets[i] = int(rng() % 50257);

  const double blas = blas_gflops();
  double best_step = 1e30;
  for (int s = 0; s <= steps; ++s) {  // step 0 warms up
    const auto start = Clock::now();
    model.zero_gradients();
    model.forward(inputs.data(), targets.data(), B, T);
    model.backward();
    axo::cpu::adamw_update(model.parameters().data(), model.gradients().data(), m.data(), v.data(), m.size(),
                           axo::cpu::AdamWSettings{}, s + 1);
    if (s > 0) best_step = std::min(best_step, seconds_since(start));
  }
  const double gflops = gpt_training_flops(model.shape(), B, T) / best_step / 1e9;
  std::printf("GPT-2 124M-shaped layers (L=2, C=768, NH=12, V=50257), B=%lld, T=%lld, %lld parameters\n",
              (long long)B, (long long)T, (long long)axo::gpt_parameter_count(shape));
  std::printf("step %.3f s (best of %d) | %.0f tokens/s | %.2f GFLOP/s | BLAS 1024^3 GEMM %.2f GFLOP/s | %.1f%% of BLAS\n",
              best_step, steps, double(B * T) / best_step, gflops, blas, 100.0 * gflops / blas);
  const axo::OpTimes& t = model.times();
  std::printf("time by op over all steps (s): gemm %.2f, attention %.2f, layernorm %.2f, gelu %.2f, embedding %.2f, loss %.2f, residual %.2f\n",
              t.gemm, t.attention, t.layernorm, t.gelu, t.embedding, t.loss, t.residual);
  return 0;
}
