// bf16 and fp16 mixed-precision training against fp32 on the CPU executor, GPT-2
// 124M-shaped layers (C = 768, 12 heads, the 50257-token vocabulary padded
// to 50304; 2 layers instead of 12 to keep the run short), one rank, all
// measured in the same run:
//   - each precision's best training step (forward, backward, clipping,
//     AdamW: ParallelGpt, as `axo train` runs it; fp16 with its loss scaling:
//     the loss scaled by 2^16, the gradients checked for overflow and
//     unscaled) and their ratios to fp32;
//   - the step's GEMM rate (its GEMM FLOPs over the time in its GEMMs,
//     bf16 operand rounding included) against oneDNN's bf16 matmul rate on
//     the step's own shapes with operands already in bf16 (gemm_half).
//   build/bench/mixed_precision_bench [steps] [batch] [seq]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "executor/comm/self_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/gpt/gpt.h"
#include "executor/parallel/parallel_gpt.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The step's GEMMs, forward: per layer qkv [m,3C]·[C], attproj [m,C]·[C], fc [m,4C]·[C], fcproj [m,C]·[4C];
// the head [m,Vp]·[C]. Backward runs each twice more (dX and dW): 3× the forward's FLOPs.
struct GemmShape {
  int64_t n, k;
};
std::vector<GemmShape> forward_shapes(const axo::GptShape& g) {
  const int64_t C = g.channels;
  std::vector<GemmShape> shapes;
  for (int64_t l = 0; l < g.layers; ++l) shapes.insert(shapes.end(), {{3 * C, C}, {C, C}, {4 * C, C}, {C, 4 * C}});
  shapes.push_back({g.padded_vocab, C});
  return shapes;
}

double step_gemm_flops(const axo::GptShape& g, int64_t m) {
  double flops = 0;
  for (const GemmShape& s : forward_shapes(g)) flops += 2.0 * double(m) * double(s.n) * double(s.k);
  return 3 * flops;
}

// oneDNN's bf16 rate on the forward shapes (Y = X·Wᵀ), operands in bf16, best of 3.
double onednn_bf16_gflops(const axo::GptShape& g, int64_t m) {
  double best = 1e30, flops = 0;
  for (int rep = 0; rep < 4; ++rep) {
    double seconds = 0;
    flops = 0;
    for (const GemmShape& s : forward_shapes(g)) {
      std::vector<axo::cpu::Half> x(size_t(m * s.k), axo::cpu::to_bfloat16(0.5f));
      std::vector<axo::cpu::Half> w(size_t(s.n * s.k), axo::cpu::to_bfloat16(0.25f));
      std::vector<float> y(size_t(m * s.n));
      const auto start = Clock::now();
      axo::cpu::gemm_half(axo::cpu::HalfFormat::bf16, false, true, m, s.n, s.k, 1.0f, x.data(), s.k, w.data(), s.k,
                          0.0f, y.data(), s.n);
      seconds += seconds_since(start);
      flops += 2.0 * double(m) * double(s.n) * double(s.k);
    }
    if (rep > 0) best = std::min(best, seconds);  // rep 0 creates the primitives
  }
  return flops / best / 1e9;
}

struct Measured {
  double step_s = 1e30, gemm_s = 0, loss = 0;
};

Measured train(axo::Precision precision, const axo::GptShape& shape, int steps, int64_t B, int64_t T) {
  axo::SelfCommunicator self;
  axo::ParallelConfig config;
  config.microbatch = B;
  axo::ProcessGrid grid(self, config);
  axo::ParallelOptions options;
  options.precision = precision;
  options.seq = T;
  axo::ParallelGpt model(shape, grid, options);
  axo::Gpt initial(shape);
  initial.initialize(1);
  model.load(initial.parameters());
  std::vector<int> inputs(size_t(B * T)), targets(inputs.size());
  std::mt19937 rng(1);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = int(rng() % 50257), targets[i] = int(rng() % 50257);
  // fp16 trains with loss scaling (train/loss_scaler.h's starting scale, 2^16).
  const double loss_scale = precision == axo::Precision::fp16 ? 65536.0 : 1.0;
  Measured best;
  for (int s = 0; s <= steps; ++s) {  // step 0 warms up
    model.times() = axo::PhaseTimes{};
    const auto start = Clock::now();
    const double loss = model.forward_backward(inputs.data(), targets.data(), B, T, B, loss_scale);
    if (loss_scale != 1 && model.unscale_gradients(loss_scale)) std::printf("fp16 step %d overflowed\n", s);
    model.clip_gradients(1.0);
    model.adamw(s + 1, 1e-4, 0.1);
    const double seconds = seconds_since(start);
    if (s > 0 && seconds < best.step_s) best = {seconds, model.times().ops.gemm, loss};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::stoi(argv[1]) : 3;
  const int64_t B = argc > 2 ? std::stoll(argv[2]) : 4;
  const int64_t T = argc > 3 ? std::stoll(argv[3]) : 256;
  const axo::GptShape shape{2, 12, 768, 1024, 50257, 50304};
  const double gemm_flops = step_gemm_flops(shape, B * T);
  const Measured fp32 = train(axo::Precision::fp32, shape, steps, B, T);
  const Measured bf16 = train(axo::Precision::bf16, shape, steps, B, T);
  const Measured fp16 = train(axo::Precision::fp16, shape, steps, B, T);
  const double onednn = onednn_bf16_gflops(shape, B * T);
  std::printf("GPT-2 124M-shaped layers (L=2, C=768, NH=12, V=50257), B=%lld, T=%lld, %d gemm threads\n",
              (long long)B, (long long)T, axo::cpu::gemm_threads());
  for (const auto& [name, m] : {std::pair{"fp32", fp32}, std::pair{"bf16", bf16}, std::pair{"fp16", fp16}}) {
    std::printf("%s: step %.3f s (best of %d) | %.0f tokens/s | GEMMs %.3f s = %.0f%% of the step, %.1f GFLOP/s | loss %.4f\n",
                name, m.step_s, steps, double(B * T) / m.step_s, m.gemm_s, 100 * m.gemm_s / m.step_s,
                gemm_flops / m.gemm_s / 1e9, m.loss);
  }
  const double bf16_gemm_rate = gemm_flops / bf16.gemm_s / 1e9;
  std::printf("bf16 step speed-up over fp32: %.2fx (goal >= 1.6x)\n", fp32.step_s / bf16.step_s);
  std::printf("fp16 step speed-up over fp32: %.2fx (fp16 GEMMs widened onto the fp32 GEMM: no fp16 matmul here)\n",
              fp32.step_s / fp16.step_s);
  std::printf("oneDNN bf16 matmul on the step's forward shapes: %.1f GFLOP/s; the bf16 step's GEMMs at %.0f%% of it "
              "(goal >= 60%%)\n", onednn, 100 * bf16_gemm_rate / onednn);
  return 0;
}
