// CPU offload's two costs and its saving, measured in one run:
//   build/bench/offload_bench [steps] [adam_millions]
// 1. AdamW over `adam_millions` million parameters (default 32): the scalar
//    loop, the vectorized one, and the vectorized one over every core; GB/s
//    counts the 28 bytes AdamW moves per parameter (reads θ, g, m, v; writes
//    θ, m, v), and the ratios are against the scalar loop.
// 2. Training steps of GPT-2 124M-shaped layers (C = 768, 12 heads, the
//    50257-token vocabulary, 2 layers; batch 4 of 256 tokens) on one rank,
//    alternating offload off and on step by step: the median step, its
//    offload (host-link copies) and optimizer seconds, and the peak device
//    memory by use. On the CPU backend the "host link" is a memory copy, so
//    the time cost here is the copies and nothing of PCIe.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/adamw.h"
#include "executor/cpu/gemm.h"
#include "executor/parallel/parallel_gpt.h"
#include "model/byte_size.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_of(const std::function<void()>& work) {
  const auto start = Clock::now();
  work();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void bench_adamw(size_t n, int threads) {
  std::vector<float> theta(n, 0.5f), grad(n), m(n, 0.0f), v(n, 0.0f);
  for (size_t i = 0; i < n; ++i) grad[i] = float(i % 1000) * 1e-4f - 0.05f;
  const axo::cpu::AdamWSettings settings{3e-4f, 0.9f, 0.95f, 1e-8f, 0.1f};
  const std::vector<axo::cpu::AdamWRange> all = {{0, int64_t(n), 0.1f}};
  const char* names[] = {"scalar loop", "vectorized", "vectorized, threads"};
  std::vector<double> times[3];
  long step = 0;
  for (int rep = 0; rep < 5; ++rep) {  // the three alternate, so drift hits each alike
    times[0].push_back(seconds_of([&] {
      axo::cpu::adamw_update_reference(theta.data(), grad.data(), m.data(), v.data(), n, settings, ++step);
    }));
    times[1].push_back(seconds_of([&] {
      axo::cpu::adamw_update(theta.data(), grad.data(), m.data(), v.data(), n, settings, ++step);
    }));
    times[2].push_back(seconds_of([&] {
      axo::cpu::adamw_update_ranges(theta.data(), grad.data(), m.data(), v.data(), all, settings, ++step, threads);
    }));
  }
  std::printf("AdamW over %.1f M parameters (median of 5):\n", double(n) / 1e6);
  for (int k = 0; k < 3; ++k) {
    const double t = median(times[k]);
    std::printf("  %-20s %8.2f ms  %6.1f GB/s  x%.2f vs scalar%s\n", names[k], t * 1e3, 28.0 * double(n) / t / 1e9,
                median(times[0]) / t, k == 2 ? (" (" + std::to_string(threads) + " threads)").c_str() : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  axo::MpiSession mpi(&argc, &argv);
  axo::MpiCommunicator world(MPI_COMM_WORLD);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 4;
  const size_t adam_n = size_t((argc > 2 ? std::atof(argv[2]) : 32.0) * 1e6);
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  axo::cpu::set_gemm_threads(cores);
  bench_adamw(adam_n, cores);

  const axo::GptShape shape{2, 12, 768, 1024, 50257, 50304};
  const int64_t B = 4, T = 256;
  axo::Gpt initial(shape);
  initial.initialize(1);
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> token(0, int(shape.vocab) - 1);
  std::vector<int> inputs(size_t(B * T)), targets(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = token(rng), targets[i] = token(rng);

  struct Run {
    std::unique_ptr<axo::ProcessGrid> grid;
    std::unique_ptr<axo::ParallelGpt> model;
    std::vector<double> step_s, offload_s, optimizer_s;
  };
  Run runs[2];
  for (int offload = 0; offload < 2; ++offload) {
    axo::ParallelConfig config;
    config.microbatch = B, config.offload = offload == 1;
    axo::ParallelOptions options;
    options.seq = T;
    options.optimizer_threads = cores;
    runs[offload].grid = std::make_unique<axo::ProcessGrid>(world, config);
    runs[offload].model = std::make_unique<axo::ParallelGpt>(shape, *runs[offload].grid, options);
    runs[offload].model->load(initial.parameters());
  }
  for (int s = 0; s < steps + 1; ++s) {
    for (Run& run : runs) {
      axo::ParallelGpt& model = *run.model;
      model.times() = axo::PhaseTimes{};
      const double seconds = seconds_of([&] {
        model.forward_backward(inputs.data(), targets.data(), B, T, B);
        model.clip_gradients(1.0);
        model.adamw(s + 1, 3e-4, 0.1);
      });
      if (s == 0) continue;  // warm-up
      run.step_s.push_back(seconds);
      run.offload_s.push_back(model.times().offload);
      run.optimizer_s.push_back(model.times().optimizer);
    }
  }
  std::printf("\nTraining steps, GPT-2 124M-shaped (2 layers, %.1f M parameters), batch %lld x %lld tokens, median of %d:\n",
              double(axo::gpt_parameter_count(shape)) / 1e6, (long long)B, (long long)T, steps);
  const double base = median(runs[0].step_s);
  for (int offload = 0; offload < 2; ++offload) {
    const Run& run = runs[offload];
    const axo::DeviceMemory& device = run.model->device_memory();
    std::printf("  offload %-3s  step %8.1f ms (x%.3f)  offload copies %6.1f ms  optimizer %6.1f ms\n",
                offload ? "on" : "off", median(run.step_s) * 1e3, median(run.step_s) / base,
                median(run.offload_s) * 1e3, median(run.optimizer_s) * 1e3);
    std::printf("               device peak %s: %s\n", axo::format_bytes(double(device.peak())).c_str(),
                axo::bytes_by_use_text(device.peak_by_use()).c_str());
    if (offload) std::printf("               host: %s\n", axo::format_bytes(double(run.model->host_memory().peak())).c_str());
  }
  auto model_state = [](const axo::DeviceMemory& d) {
    return double(d.peak_share(axo::DeviceUse::weights) + d.peak_share(axo::DeviceUse::gradients) +
                  d.peak_share(axo::DeviceUse::optimizer));
  };
  std::printf("  model state on the device: x%.2f less with offload (fp32; bf16 weights and gradients would make it x4)\n",
              model_state(runs[0].model->device_memory()) / model_state(runs[1].model->device_memory()));
  std::printf("  peak device memory: x%.2f less with offload\n",
              double(runs[0].model->device_memory().peak()) / double(runs[1].model->device_memory().peak()));
  return 0;
}
