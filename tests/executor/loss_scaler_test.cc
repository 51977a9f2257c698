// Dynamic loss scaling: the scaler's back-off and growth, the inf/NaN scan,
// and, on every rank of this launch, an overflow injected on one rank only
// skips the step on all of them (weights unchanged everywhere, the scale
// halved), while a clean scaled step gives the unscaled gradients bit for
// bit (a power-of-two scale commutes with fp32 rounding).
// axo-test-ranks: 1 2 4
#include "executor/train/loss_scaler.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/gpt/gpt.h"
#include "executor/parallel/parallel_gpt.h"

namespace axo {
namespace {

TEST(LossScalerTest, BacksOffOnOverflowAndGrowsAfterACleanStretch) {
  LossScaler scaler({1024, 0.5, 2, 3, 1});
  EXPECT_FALSE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 512);
  EXPECT_TRUE(scaler.update(false));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 512);
  EXPECT_TRUE(scaler.update(false));  // the third clean step in a row
  EXPECT_EQ(scaler.scale(), 1024);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  LossScaler floor({2, 0.5, 2, 1000, 1});
  floor.update(true), floor.update(true);
  EXPECT_EQ(floor.scale(), 1);  // never below min_scale
}

TEST(LossScalerTest, FindsInfAndNanInFp32Bf16AndFp16) {
  std::vector<float> v(100, 1.0f);
  EXPECT_FALSE(has_inf_or_nan(v.data(), 100));
  v[77] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(has_inf_or_nan(v.data(), 100));
  std::vector<cpu::Half> h(100, cpu::to_bfloat16(3.0e38f));
  EXPECT_FALSE(has_inf_or_nan(h.data(), 100, cpu::HalfFormat::bf16));
  h[5] = cpu::to_bfloat16(-std::numeric_limits<float>::infinity());
  EXPECT_TRUE(has_inf_or_nan(h.data(), 100, cpu::HalfFormat::bf16));
  // fp16: 65504 is finite; a gradient past it (65520 rounds up) is the overflow loss scaling backs off from.
  std::vector<cpu::Half> f(100, cpu::to_float16(65504.0f));
  EXPECT_FALSE(has_inf_or_nan(f.data(), 100, cpu::HalfFormat::fp16));
  f[99] = cpu::to_float16(65520.0f);
  EXPECT_TRUE(has_inf_or_nan(f.data(), 100, cpu::HalfFormat::fp16));
  f[99] = cpu::to_float16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(has_inf_or_nan(f.data(), 100, cpu::HalfFormat::fp16));
}

constexpr int64_t kT = 8, kSequences = 4, kMicrobatch = 2;

struct Model {
  MpiCommunicator world{MPI_COMM_WORLD};
  ProcessGrid grid;
  ParallelGpt gpt;
  Model(const ParallelConfig& config, Precision precision)
      : grid(world, config), gpt(shape(), grid, options(precision)) {
    Gpt reference(shape());
    reference.initialize(7);
    gpt.load(reference.parameters());
  }
  static GptShape shape() {
    GptShape g;
    g.layers = 2, g.heads = 4, g.channels = 32, g.max_seq = 16, g.vocab = 100, g.padded_vocab = 128;
    return g;
  }
  static ParallelOptions options(Precision precision) {
    ParallelOptions o;
    o.precision = precision, o.seq = kT;
    return o;
  }
  double step(double scale) {
    std::mt19937 rng(5);
    std::vector<int> tokens(size_t(kSequences * kT * grid.config().data));
    for (int& t : tokens) t = int(rng() % 100);
    const int* mine = tokens.data() + grid.coords().data * kSequences * kT;
    return gpt.forward_backward(mine, mine, kSequences, kT, kMicrobatch, scale);
  }
};

// Data parallel over every rank of the launch, and its grids with the model split.
std::vector<ParallelConfig> configs(int ranks) {
  ParallelConfig data, split;
  data.data = ranks, data.microbatch = kMicrobatch;
  split.microbatch = kMicrobatch;
  if (ranks >= 2) split.pipeline = 2, split.x = ranks / 2;
  return ranks == 1 ? std::vector<ParallelConfig>{data} : std::vector<ParallelConfig>{data, split};
}

TEST(LossScalerTest, AnOverflowOnOneRankSkipsTheStepOnEveryRank) {
  cpu::set_gemm_threads(1);
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  for (Precision precision : {Precision::fp32, Precision::bf16}) {
    for (const ParallelConfig& config : configs(world_size)) {
      SCOPED_TRACE(std::string(to_string(precision)) + " " + std::to_string(config.pipeline) + " stages");
      Model model(config, precision);
      LossScaler scaler;
      const std::vector<float> before = model.gpt.gather(model.gpt.master_weights().data());
      model.step(scaler.scale());
      if (model.world.rank() == model.world.size() - 1) model.gpt.inject_gradient_overflow();
      const bool overflow = model.gpt.unscale_gradients(scaler.scale());
      EXPECT_TRUE(overflow) << "rank " << model.world.rank() << " did not see the last rank's overflow";
      EXPECT_FALSE(scaler.update(overflow));
      // The trainer applies nothing: the weights are those before the step on every rank.
      EXPECT_EQ(model.gpt.gather(model.gpt.master_weights().data()), before);
      EXPECT_EQ(scaler.scale(), 32768);
    }
  }
}

TEST(LossScalerTest, ACleanScaledStepGivesTheUnscaledGradientsBitForBit) {
  cpu::set_gemm_threads(1);
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  for (const ParallelConfig& config : configs(world_size)) {
    Model plain(config, Precision::fp32), scaled(config, Precision::fp32);
    const double loss = plain.step(1), scaled_loss = scaled.step(65536);
    EXPECT_EQ(loss, scaled_loss);
    EXPECT_FALSE(scaled.gpt.unscale_gradients(65536));
    EXPECT_EQ(scaled.gpt.gather_gradients(), plain.gpt.gather_gradients());
  }
}

}  // namespace
}  // namespace axo
