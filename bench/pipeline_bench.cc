// The message-driven pipeline against static 1F1B when one stage's compute
// is jittered (AxoNN's argument for message-driven execution). Under mpirun
// with one rank per stage:
//   mpirun -np 4 build/bench/pipeline_bench [steps] [microbatches] [jitter_ms] [stage]
// Each step adds a uniform [0, jitter_ms) sleep to every forward of `stage`
// (default 1). The two schedules alternate step by step in the same run
// (same model, same batch, same jitter seeds), and the median iteration time
// of each and their ratio are printed by rank 0.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/parallel/parallel_gpt.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  axo::MpiSession mpi(&argc, &argv);
  axo::MpiCommunicator world(MPI_COMM_WORLD);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10;
  const int64_t microbatches = argc > 2 ? std::atoll(argv[2]) : 8;
  const double jitter_ms = argc > 3 ? std::atof(argv[3]) : 20;
  const int64_t stage = argc > 4 ? std::atoll(argv[4]) : 1;
  axo::cpu::set_gemm_threads(1);

  // A small GPT-2-shaped model, two layers per stage.
  axo::GptShape shape;
  shape.layers = 2 * world.size(), shape.heads = 4, shape.channels = 128, shape.max_seq = 64;
  shape.vocab = 256, shape.padded_vocab = 256;
  const int64_t T = 64, microbatch = 2, sequences = microbatches * microbatch;
  axo::ParallelConfig config;
  config.pipeline = world.size();
  config.microbatch = microbatch;
  axo::ProcessGrid grid(world, config);

  axo::Gpt initial(shape);
  initial.initialize(1);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> token(0, int(shape.vocab) - 1);
  std::vector<int> inputs(size_t(sequences * T)), targets(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = token(rng), targets[i] = token(rng);

  std::vector<double> times[2];
  for (int s = 0; s < steps + 1; ++s) {
    for (int kind = 0; kind < 2; ++kind) {
      axo::ParallelOptions options;
      options.seq = T;
      options.schedule.schedule = kind == 0 ? axo::Schedule::message_driven : axo::Schedule::one_f_one_b;
      options.schedule.delayed_stage = stage;
      options.schedule.jitter_s = jitter_ms / 1000.0;
      options.schedule.seed = uint64_t(s);
      axo::ParallelGpt model(shape, grid, options);
      model.load(initial.parameters());
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = std::chrono::steady_clock::now();
      model.forward_backward(inputs.data(), targets.data(), sequences, T, microbatch);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);  // the slowest rank's
      if (s > 0) times[kind].push_back(seconds);  // step 0 warms up
    }
  }
  if (world.rank() == 0) {
    const double md = median(times[0]), f1b = median(times[1]);
    std::printf("pipeline of %d stages, %lld microbatches, stage %lld jittered by U[0, %.0f ms) per forward, %d steps each\n",
                world.size(), (long long)microbatches, (long long)stage, jitter_ms, steps);
    std::printf("  message-driven: median %.1f ms per iteration\n", md * 1e3);
    std::printf("  1F1B:           median %.1f ms per iteration\n", f1b * 1e3);
    std::printf("  1F1B / message-driven: %.3f\n", f1b / md);
  }
  return 0;
}
