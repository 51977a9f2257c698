// bf16 mixed precision in the 4D-parallel GPT (parallel_gpt.h): the serial
// bf16 run trains like the fp32 one, and every grid of this launch in bf16
// gives the serial bf16 run's losses and gradients to bf16 round-off.
//
// Tolerances (stated per check below):
//   bf16 against fp32, serial: the first step's gradients per llm.c tensor
//     within 2⁻⁴ of the tensor's largest value (16 bf16 roundings' worth);
//     each step's loss within 1% (Micikevicius et al.
//     2018 report bf16/fp16 training curves on fp32's; 1% is well above the
//     few 2⁻⁸ roundings a loss carries at this size, and far below a broken
//     layer's effect).
//   parallel bf16 against serial bf16: losses within 1e-3 relative; per llm.c
//     tensor, the gradients' largest difference within 2⁻⁵ of the tensor's
//     largest value, four bf16 units in its last place (an ulp is 2⁻⁷ of a
//     value in [2^e, 2^(e+1))): the grids sum in another order, so each of
//     the microbatches' bf16 accumulations, the reduction's rounding and a
//     GEMM operand's rounding may land on the neighbouring bf16 (seen: up
//     to 1.2·2⁻⁷ at 2 and 4 ranks). A wrong shard or a missed reduction
//     errs by the gradient's own size.
//   model state on the device, by category, against the memory model
//     (model/memory_model.h): equal to the byte, for the spec of the tensors
//     the executor holds (its padded vocabulary, wpe's max_seq rows); and
//     16 bytes per local parameter in fp32 against 4 in bf16 with offload:
//     AxoNN's 4×.
// axo-test-ranks: 1 2 4
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/comm/self_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/gpt/gpt.h"
#include "executor/parallel/parallel_gpt.h"
#include "model/memory_model.h"

namespace axo {
namespace {

constexpr int64_t kT = 8, kSequencesPerReplica = 8, kMicrobatch = 2, kSteps = 3;
constexpr double kLr = 1e-3, kDecay = 0.1, kClip = 1.0;

GptShape test_shape(int64_t layers) {
  GptShape g;
  g.layers = layers, g.heads = 4, g.channels = 32, g.max_seq = 16, g.vocab = 100, g.padded_vocab = 128;
  return g;
}

struct Trained {
  std::vector<double> losses;
  std::vector<float> first_gradients;
};

// kSteps steps of `config` on `world` at `precision` from the same initial weights and batches.
Trained train(Communicator& world, const ParallelConfig& config, ParallelOptions options, int64_t layers) {
  const GptShape shape = test_shape(layers);
  options.seq = kT;
  ProcessGrid grid(world, config);
  ParallelGpt model(shape, grid, options);
  Gpt reference(shape);
  reference.initialize(7);
  model.load(reference.parameters());
  Trained t;
  const int64_t sequences = kSequencesPerReplica * config.data;
  for (int step = 0; step < kSteps; ++step) {
    std::mt19937 rng(1000 + step);
    std::uniform_int_distribution<int> token(0, int(shape.vocab) - 1);
    std::vector<int> inputs, targets;
    for (int64_t i = 0; i < sequences * kT; ++i) inputs.push_back(token(rng)), targets.push_back(token(rng));
    const int64_t first = grid.coords().data * kSequencesPerReplica * kT;
    t.losses.push_back(model.forward_backward(inputs.data() + first, targets.data() + first, kSequencesPerReplica,
                                              kT, kMicrobatch));
    if (step == 0) t.first_gradients = model.gather_gradients();
    model.clip_gradients(kClip);
    model.adamw(step + 1, kLr, kDecay);
  }
  return t;
}

// The same steps on one rank (every rank runs its own copy).
Trained train_serial(Precision precision, int64_t layers) {
  SelfCommunicator self;
  ParallelConfig serial;
  serial.microbatch = kMicrobatch;
  ParallelOptions options;
  options.precision = precision;
  return train(self, serial, options, layers);
}

TEST(MixedPrecisionTest, SerialBf16TrainsLikeFp32) {
  cpu::set_gemm_threads(1);
  const Trained fp32 = train_serial(Precision::fp32, 4), bf16 = train_serial(Precision::bf16, 4);
  bool differs = false;
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(bf16.losses[size_t(s)], fp32.losses[size_t(s)], 0.01 * fp32.losses[size_t(s)]) << "step " << s;
    differs |= bf16.losses[size_t(s)] != fp32.losses[size_t(s)];
  }
  EXPECT_TRUE(differs) << "bf16 gave fp32's losses bit for bit: nothing ran in bf16";
  // The first step's gradients, per llm.c tensor, within 2⁻⁴ of the tensor's largest fp32 gradient
  // (bf16's 2⁻⁸ roundings of weights, activations and gradients, compounded through the layers).
  const auto sizes = gpt_tensor_sizes(test_shape(4));
  size_t offset = 0;
  for (int i = 0; i < kGptTensors; ++i) {
    double scale = 0, worst = 0;
    for (size_t j = offset; j < offset + size_t(sizes[size_t(i)]); ++j) {
      scale = std::max(scale, double(std::fabs(fp32.first_gradients[j])));
      worst = std::max(worst, double(std::fabs(bf16.first_gradients[j] - fp32.first_gradients[j])));
    }
    EXPECT_LE(worst, std::ldexp(1.0, -4) * scale) << "tensor " << i << " (llm.c order)";
    offset += size_t(sizes[size_t(i)]);
  }
}

struct Grid {
  std::string name;
  int64_t pipeline, data, z, y, x;
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  int64_t interleave = 1;
  int64_t context = 1;  // ring attention over the context ranks (its activations in the rolling bf16 stash)
};

Grid with_context(int64_t context, Grid g) {
  g.context = context;
  return g;
}

std::vector<Grid> grids() {
  return {
      {"x2", 1, 1, 1, 1, 2},
      {"y2_sequence_parallel", 1, 1, 1, 2, 1, Recompute::none, true},
      {"z2", 1, 1, 2, 1, 1},
      {"pipe2", 2, 1, 1, 1, 1},
      {"pipe2_full_recompute", 2, 1, 1, 1, 1, Recompute::full},
      {"x2y2", 1, 1, 1, 2, 2},
      {"x2z2_selective_recompute", 1, 1, 2, 1, 2, Recompute::selective},
      {"pipe2_interleave2_y2", 2, 1, 1, 2, 1, Recompute::none, false, 2},
      {"pipe4", 4, 1, 1, 1, 1},
      with_context(2, {"context2", 1, 1, 1, 1, 1}),
      with_context(2, {"context2_full_recompute", 1, 1, 1, 1, 1, Recompute::full}),
      with_context(2, {"context2_y2_sequence_parallel", 1, 1, 1, 2, 1, Recompute::none, true}),
      with_context(2, {"context2_x2_selective_recompute", 1, 1, 1, 1, 2, Recompute::selective}),
      with_context(2, {"pipe2_context2", 2, 1, 1, 1, 1}),
  };
}

// Per llm.c tensor, max |parallel − serial| ≤ 2⁻⁵ · max |serial|.
void expect_close_to_bf16_roundoff(const std::vector<float>& parallel, const std::vector<float>& serial,
                                   int64_t layers) {
  ASSERT_EQ(parallel.size(), serial.size());
  const auto sizes = gpt_tensor_sizes(test_shape(layers));
  size_t offset = 0;
  for (int i = 0; i < kGptTensors; ++i) {
    double scale = 0, worst = 0;
    for (size_t j = offset; j < offset + size_t(sizes[size_t(i)]); ++j) {
      scale = std::max(scale, double(std::fabs(serial[j])));
      worst = std::max(worst, double(std::fabs(parallel[j] - serial[j])));
    }
    EXPECT_LE(worst, std::ldexp(1.0, -5) * scale) << "tensor " << i << " (llm.c order)";
    offset += size_t(sizes[size_t(i)]);
  }
}

TEST(MixedPrecisionTest, EveryGridOfThisLaunchMatchesTheSerialBf16Run) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  const int64_t layers = 4;
  const Trained serial = train_serial(Precision::bf16, layers);
  int ran = 0;
  for (const Grid& g : grids()) {
    ParallelConfig config;
    config.pipeline = g.pipeline, config.data = g.data, config.z = g.z, config.y = g.y, config.x = g.x;
    config.microbatch = kMicrobatch, config.sequence_parallel = g.sequence_parallel, config.interleave = g.interleave;
    config.context = g.context;
    if (config.gpus() != world.size()) continue;
    SCOPED_TRACE(g.name);
    ParallelOptions options;
    options.precision = Precision::bf16;
    options.recompute = g.recompute;
    const Trained parallel = train(world, config, options, layers);
    for (int s = 0; s < kSteps; ++s) {
      EXPECT_NEAR(parallel.losses[size_t(s)], serial.losses[size_t(s)], 1e-3 * serial.losses[size_t(s)]) << "step " << s;
    }
    expect_close_to_bf16_roundoff(parallel.first_gradients, serial.first_gradients, layers);
    ++ran;
  }
  if (world.size() > 1) {
    EXPECT_GT(ran, 0) << "no grid of " << world.size() << " ranks";
  }
}

struct ModelState {
  double weights = 0, gradients = 0, optimizer = 0, local_parameters = 0;
  double total() const { return weights + gradients + optimizer; }
};

// The device bytes a freshly built serial model books by category.
ModelState device_model_state(Precision precision, bool offload, int64_t layers) {
  SelfCommunicator self;
  ParallelConfig config;
  config.microbatch = kMicrobatch, config.offload = offload;
  ProcessGrid grid(self, config);
  ParallelOptions options;
  options.precision = precision, options.seq = kT;
  ParallelGpt model(test_shape(layers), grid, options);
  const DeviceMemory& d = model.device_memory();
  return {double(d.in_use(DeviceUse::weights)), double(d.in_use(DeviceUse::gradients)),
          double(d.in_use(DeviceUse::optimizer)), double(model.layout().size())};
}

TEST(MixedPrecisionTest, Bf16WithOffloadKeepsAQuarterOfFp32sModelStateOnTheDevice) {
  const ModelState fp32 = device_model_state(Precision::fp32, false, 4);
  const ModelState bf16 = device_model_state(Precision::bf16, false, 4);
  const ModelState bf16_offload = device_model_state(Precision::bf16, true, 4);
  EXPECT_EQ(fp32.total(), 16 * fp32.local_parameters);             // 4 + 4 + 8 (moments)
  EXPECT_EQ(bf16.total(), 16 * bf16.local_parameters);             // 2 + 2 + 12 (masters, moments)
  EXPECT_EQ(bf16_offload.total(), 4 * bf16_offload.local_parameters);  // 2 + 2
  EXPECT_EQ(bf16_offload.optimizer, 0);
  EXPECT_GE(fp32.total() / bf16_offload.total(), 4.0);
}

TEST(MixedPrecisionTest, TheMemoryModelAgreesOnTheModelStateByCategory) {
  const int64_t layers = 4;
  for (Precision precision : {Precision::fp32, Precision::bf16}) {
    for (bool offload : {false, true}) {
      SCOPED_TRACE(std::string(to_string(precision)) + (offload ? " with offload" : ""));
      const ModelState measured = device_model_state(precision, offload, layers);
      // The tensors the executor holds: the padded vocabulary's rows, wpe's max_seq rows.
      const GptShape shape = test_shape(layers);
      TransformerSpec spec = gpt_spec(shape, shape.max_seq);
      spec.vocab = shape.padded_vocab;
      spec.precision = precision;
      ParallelConfig config;
      config.microbatch = kMicrobatch, config.offload = offload;
      const MemoryBreakdown predicted = memory_per_device(spec, config);
      EXPECT_EQ(measured.weights, predicted.weights);
      EXPECT_EQ(measured.gradients, predicted.gradients);
      EXPECT_EQ(measured.optimizer, predicted.optimizer);
    }
  }
}

}  // namespace
}  // namespace axo
