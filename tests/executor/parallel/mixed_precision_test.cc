// Mixed precision in the 4D-parallel GPT (parallel_gpt.h), bf16 and fp16:
// the serial bf16 and fp16 runs train like the fp32 one, and every grid of
// this launch in bf16 (and a few, data parallelism included, in fp16) gives
// the serial run's losses and gradients to the format's round-off. fp16
// trains with loss scaling (the loss times 2^16, the gradients checked and
// unscaled); an overflow, injected on one rank or real (a scale fp16's range
// cannot hold), is seen by every rank, and the step skipped on all.
//
// Tolerances (stated per check below):
//   bf16 against fp32, serial: the first step's gradients per llm.c tensor
//     within 2⁻⁴ of the tensor's largest value (16 bf16 roundings' worth);
//     each step's loss within 1% (Micikevicius et al.
//     2018 report bf16/fp16 training curves on fp32's; 1% is well above the
//     few 2⁻⁸ roundings a loss carries at this size, and far below a broken
//     layer's effect).
//   fp16 against fp32, serial: the same bounds (fp16 rounds to 2⁻¹¹, finer
//     than bf16's 2⁻⁸, and loss scaling keeps its gradients normal).
//   parallel bf16 against serial bf16: losses within 1e-3 relative; per llm.c
//     tensor, the gradients' largest difference within 2⁻⁵ of the tensor's
//     largest value, four bf16 units in its last place (an ulp is 2⁻⁷ of a
//     value in [2^e, 2^(e+1))): the grids sum in another order, so each of
//     the microbatches' bf16 accumulations, the reduction's rounding and a
//     GEMM operand's rounding may land on the neighbouring bf16 (seen: up
//     to 1.2·2⁻⁷ at 2 and 4 ranks). A wrong shard or a missed reduction
//     errs by the gradient's own size.
//   parallel fp16 against serial fp16: losses within 1e-3 relative; per
//     tensor within 2⁻⁸ of its largest value, four fp16 units in the last
//     place (2⁻¹⁰ of a value in [2^e, 2^(e+1))), for the same reasons (seen:
//     up to 2^-9.75 at 2 and 4 ranks).
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
#include "executor/parallel/shard_layout.h"
#include "executor/train/loss_scaler.h"
#include "model/error.h"
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

// Step `step`'s batch of `sequences` sequences (the same for every grid).
void make_batch(int step, int64_t sequences, const GptShape& shape, std::vector<int>& inputs,
                std::vector<int>& targets) {
  std::mt19937 rng(1000 + step);
  std::uniform_int_distribution<int> token(0, int(shape.vocab) - 1);
  inputs.clear(), targets.clear();
  for (int64_t i = 0; i < sequences * kT; ++i) inputs.push_back(token(rng)), targets.push_back(token(rng));
}

// fp16 trains with loss scaling at the scaler's starting scale (loss_scaler.h); the others without.
double loss_scale_of(Precision precision) {
  return precision == Precision::fp16 ? LossScalerSettings{}.initial_scale : 1.0;
}

// kSteps steps of `config` on `world` at `precision` from the same initial
// weights and batches of kSequencesPerReplica·replicas sequences, split over the grid's data ranks.
Trained train(Communicator& world, const ParallelConfig& config, ParallelOptions options, int64_t layers,
              int64_t replicas) {
  const GptShape shape = test_shape(layers);
  options.seq = kT;
  ProcessGrid grid(world, config);
  ParallelGpt model(shape, grid, options);
  Gpt reference(shape);
  reference.initialize(7);
  model.load(reference.parameters());
  const double scale = loss_scale_of(options.precision);
  Trained t;
  const int64_t per_replica = kSequencesPerReplica * replicas / config.data;
  std::vector<int> inputs, targets;
  for (int step = 0; step < kSteps; ++step) {
    make_batch(step, kSequencesPerReplica * replicas, shape, inputs, targets);
    const int64_t first = grid.coords().data * per_replica * kT;
    t.losses.push_back(model.forward_backward(inputs.data() + first, targets.data() + first, per_replica, kT,
                                              kMicrobatch, scale));
    if (scale != 1) {
      EXPECT_FALSE(model.unscale_gradients(scale)) << "step " << step << " overflowed";
    }
    if (step == 0) t.first_gradients = model.gather_gradients();
    model.clip_gradients(kClip);
    model.adamw(step + 1, kLr, kDecay);
  }
  return t;
}

// The same steps on one rank (every rank runs its own copy), over `replicas` replicas' batch.
Trained train_serial(Precision precision, int64_t layers, int64_t replicas = 1) {
  SelfCommunicator self;
  ParallelConfig serial;
  serial.microbatch = kMicrobatch;
  ParallelOptions options;
  options.precision = precision;
  return train(self, serial, options, layers, replicas);
}

// The serial run at `precision` against fp32: losses within 1%, first gradients within 2⁻⁴ per tensor.
void expect_trains_like_fp32(Precision precision) {
  cpu::set_gemm_threads(1);
  const Trained fp32 = train_serial(Precision::fp32, 4), half = train_serial(precision, 4);
  bool differs = false;
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(half.losses[size_t(s)], fp32.losses[size_t(s)], 0.01 * fp32.losses[size_t(s)]) << "step " << s;
    differs |= half.losses[size_t(s)] != fp32.losses[size_t(s)];
  }
  EXPECT_TRUE(differs) << to_string(precision) << " gave fp32's losses bit for bit: nothing ran in 2 bytes";
  // The first step's gradients, per llm.c tensor, within 2⁻⁴ of the tensor's largest fp32 gradient
  // (the format's roundings of weights, activations and gradients, compounded through the layers).
  const auto sizes = gpt_tensor_sizes(test_shape(4));
  size_t offset = 0;
  for (int i = 0; i < kGptTensors; ++i) {
    double scale = 0, worst = 0;
    for (size_t j = offset; j < offset + size_t(sizes[size_t(i)]); ++j) {
      scale = std::max(scale, double(std::fabs(fp32.first_gradients[j])));
      worst = std::max(worst, double(std::fabs(half.first_gradients[j] - fp32.first_gradients[j])));
    }
    EXPECT_LE(worst, std::ldexp(1.0, -4) * scale) << "tensor " << i << " (llm.c order)";
    offset += size_t(sizes[size_t(i)]);
  }
}

TEST(MixedPrecisionTest, SerialBf16TrainsLikeFp32) { expect_trains_like_fp32(Precision::bf16); }
TEST(MixedPrecisionTest, SerialFp16TrainsLikeFp32) { expect_trains_like_fp32(Precision::fp16); }

struct Grid {
  std::string name;
  int64_t pipeline, data, z, y, x;
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  int64_t interleave = 1;
  int64_t context = 1;  // ring attention over the context ranks (its activations in the rolling bf16 stash)
  int64_t recompute_layers = 0;  // full recompute of each chunk's first layers only (the rest kept in bf16)
};

Grid with_context(int64_t context, Grid g) {
  g.context = context;
  return g;
}

std::vector<Grid> grids() {
  return {
      {"x2", 1, 1, 1, 1, 2},
      {"y2_sequence_parallel", 1, 1, 1, 2, 1, Recompute::none, true},
      {"y2z2_sequence_parallel", 1, 1, 2, 2, 1, Recompute::none, true},
      {"z2", 1, 1, 2, 1, 1},
      {"pipe2", 2, 1, 1, 1, 1},
      {"pipe2_full_recompute", 2, 1, 1, 1, 1, Recompute::full},
      {"pipe2_partial_recompute", 2, 1, 1, 1, 1, Recompute::full, false, 1, 1, 1},
      {"x2y2", 1, 1, 1, 2, 2},
      {"x2z2_selective_recompute", 1, 1, 2, 1, 2, Recompute::selective},
      {"pipe2_interleave2_y2", 2, 1, 1, 2, 1, Recompute::none, false, 2},
      {"pipe4", 4, 1, 1, 1, 1},
      with_context(2, {"context2", 1, 1, 1, 1, 1}),
      with_context(2, {"context2_full_recompute", 1, 1, 1, 1, 1, Recompute::full}),
      with_context(2, {"context2_partial_recompute", 1, 1, 1, 1, 1, Recompute::full, false, 1, 1, 3}),
      with_context(2, {"context2_y2_sequence_parallel", 1, 1, 1, 2, 1, Recompute::none, true}),
      with_context(2, {"context2_x2_selective_recompute", 1, 1, 1, 1, 2, Recompute::selective}),
      with_context(2, {"pipe2_context2", 2, 1, 1, 1, 1}),
  };
}

// fp16's grids: a few of bf16's, and data parallelism (its reductions of fp16 gradients in fp32).
std::vector<Grid> fp16_grids() {
  return {
      {"x2", 1, 1, 1, 1, 2},
      {"pipe2", 2, 1, 1, 1, 1},
      {"data2", 1, 2, 1, 1, 1},
      with_context(2, {"context2", 1, 1, 1, 1, 1}),
      {"pipe2_data2", 2, 2, 1, 1, 1},
      {"data2_x2", 1, 2, 1, 1, 2},
      {"x2z2_selective_recompute", 1, 1, 2, 1, 2, Recompute::selective},
      {"pipe2_interleave2_y2", 2, 1, 1, 2, 1, Recompute::none, false, 2},
  };
}

// Per llm.c tensor, max |parallel − serial| ≤ tolerance · max |serial|.
void expect_close_to_roundoff(const std::vector<float>& parallel, const std::vector<float>& serial, int64_t layers,
                              double tolerance) {
  ASSERT_EQ(parallel.size(), serial.size());
  const auto sizes = gpt_tensor_sizes(test_shape(layers));
  size_t offset = 0;
  for (int i = 0; i < kGptTensors; ++i) {
    double scale = 0, worst = 0;
    for (size_t j = offset; j < offset + size_t(sizes[size_t(i)]); ++j) {
      scale = std::max(scale, double(std::fabs(serial[j])));
      worst = std::max(worst, double(std::fabs(parallel[j] - serial[j])));
    }
    EXPECT_LE(worst, tolerance * scale) << "tensor " << i << " (llm.c order)";
    offset += size_t(sizes[size_t(i)]);
  }
}

// Each grid of this launch's size at `precision` against the serial run; `tolerance` for the gradients.
void expect_grids_match_serial(const std::vector<Grid>& candidates, Precision precision, double tolerance) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  const int64_t layers = 4;
  int ran = 0;
  for (const Grid& g : candidates) {
    ParallelConfig config;
    config.pipeline = g.pipeline, config.data = g.data, config.z = g.z, config.y = g.y, config.x = g.x;
    config.microbatch = kMicrobatch, config.sequence_parallel = g.sequence_parallel, config.interleave = g.interleave;
    config.context = g.context;
    if (config.gpus() != world.size()) continue;
    SCOPED_TRACE(g.name);
    const Trained serial = train_serial(precision, layers, g.data);  // the same batch, on one rank
    ParallelOptions options;
    options.precision = precision;
    options.recompute = g.recompute, options.recompute_layers = g.recompute_layers;
    const Trained parallel = train(world, config, options, layers, g.data);
    for (int s = 0; s < kSteps; ++s) {
      EXPECT_NEAR(parallel.losses[size_t(s)], serial.losses[size_t(s)], 1e-3 * serial.losses[size_t(s)]) << "step " << s;
    }
    expect_close_to_roundoff(parallel.first_gradients, serial.first_gradients, layers, tolerance);
    ++ran;
  }
  if (world.size() > 1) {
    EXPECT_GT(ran, 0) << "no grid of " << world.size() << " ranks";
  }
}

TEST(MixedPrecisionTest, EveryGridOfThisLaunchMatchesTheSerialBf16Run) {
  expect_grids_match_serial(grids(), Precision::bf16, std::ldexp(1.0, -5));
}

TEST(MixedPrecisionTest, Fp16GridsOfThisLaunchMatchTheSerialFp16Run) {
  expect_grids_match_serial(fp16_grids(), Precision::fp16, std::ldexp(1.0, -8));
}

// One data-parallel step at `precision` over this launch's ranks (data = ranks) at `scale`; `inject`: the last
// rank makes one of its gradients +inf first. Returns whether unscale_gradients found an overflow (on this rank).
bool step_overflows(MpiCommunicator& world, Precision precision, double scale, bool inject) {
  ParallelConfig config;
  config.data = world.size(), config.microbatch = kMicrobatch;
  ProcessGrid grid(world, config);
  ParallelOptions options;
  options.precision = precision, options.seq = kT;
  const GptShape shape = test_shape(2);
  ParallelGpt model(shape, grid, options);
  Gpt reference(shape);
  reference.initialize(7);
  model.load(reference.parameters());
  std::vector<int> inputs, targets;
  make_batch(0, kSequencesPerReplica * config.data, shape, inputs, targets);
  const int64_t first = grid.coords().data * kSequencesPerReplica * kT;
  model.forward_backward(inputs.data() + first, targets.data() + first, kSequencesPerReplica, kT, kMicrobatch, scale);
  if (inject && world.rank() == world.size() - 1) model.inject_gradient_overflow();
  return model.unscale_gradients(scale);
}

// fp16's overflows reach every rank: an inf injected on the last rank only,
// and a real one, a scale fp16's range cannot hold (2^40: the scaled
// gradients pass 65504, where bf16's range holds them), are found on every
// rank, so the scaler (loss_scaler.h) skips the step on all and halves the scale.
TEST(MixedPrecisionTest, Fp16OverflowIsSeenOnEveryRank) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  const double start = LossScalerSettings{}.initial_scale, huge = std::ldexp(1.0, 40);
  EXPECT_FALSE(step_overflows(world, Precision::fp16, start, false));
  EXPECT_TRUE(step_overflows(world, Precision::fp16, start, true)) << "rank " << world.rank();
  EXPECT_TRUE(step_overflows(world, Precision::fp16, huge, false)) << "rank " << world.rank();
  EXPECT_FALSE(step_overflows(world, Precision::bf16, huge, false)) << "rank " << world.rank();
  LossScaler scaler;
  EXPECT_FALSE(scaler.update(step_overflows(world, Precision::fp16, scaler.scale(), true)));
  EXPECT_EQ(scaler.scale(), start / 2);
  EXPECT_EQ(scaler.skipped_steps(), 1);
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

TEST(MixedPrecisionTest, HalfWithOffloadKeepsAQuarterOfFp32sModelStateOnTheDevice) {
  const ModelState fp32 = device_model_state(Precision::fp32, false, 4);
  EXPECT_EQ(fp32.total(), 16 * fp32.local_parameters);  // 4 + 4 + 8 (moments)
  for (Precision precision : {Precision::bf16, Precision::fp16}) {
    SCOPED_TRACE(to_string(precision));
    const ModelState half = device_model_state(precision, false, 4);
    const ModelState half_offload = device_model_state(precision, true, 4);
    EXPECT_EQ(half.total(), 16 * half.local_parameters);                // 2 + 2 + 12 (masters, moments)
    EXPECT_EQ(half_offload.total(), 4 * half_offload.local_parameters);  // 2 + 2
    EXPECT_EQ(half_offload.optimizer, 0);
    EXPECT_GE(fp32.total() / half_offload.total(), 4.0);
  }
}

TEST(MixedPrecisionTest, TheMemoryModelAgreesOnTheModelStateByCategory) {
  const int64_t layers = 4;
  for (Precision precision : {Precision::fp32, Precision::bf16, Precision::fp16}) {
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

constexpr int64_t kMemoryLayers = 4;

// The device's bytes by use at its peak over one forward and backward of `config` (its data ranks
// this launch's) on a kMemoryLayers-layer model, at the options' precision and recompute.
BytesByUse peak_of_one_forward_backward(MpiCommunicator& world, const ParallelConfig& config,
                                        ParallelOptions options) {
  ProcessGrid grid(world, config);
  options.seq = kT;
  const GptShape shape = test_shape(kMemoryLayers);
  ParallelGpt model(shape, grid, options);
  std::vector<int> inputs, targets;
  make_batch(0, kSequencesPerReplica * config.data, shape, inputs, targets);
  const int64_t first = grid.coords().data * kSequencesPerReplica * kT;
  model.forward_backward(inputs.data() + first, targets.data() + first, kSequencesPerReplica, kT, kMicrobatch, 1.0);
  return model.device_memory().peak_by_use();
}

// In 2-byte training the executor keeps its activations in the 2-byte format and computes in
// rolling fp32 views, its backward in fp32: the memory model's layout of it (ActivationLayout::axo)
// is what it holds at its peak, byte for byte, with each recompute (parallel_gpt_test: fp32, grids).
TEST(MixedPrecisionTest, TheMemoryModelHoldsTheExecutorsTwoByteActivations) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  for (Precision precision : {Precision::bf16, Precision::fp16}) {
    for (Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full}) {
      SCOPED_TRACE(std::string(to_string(precision)) + ", recompute " + to_string(recompute));
      ParallelConfig config;
      config.data = world.size(), config.microbatch = kMicrobatch, config.recompute = recompute;
      ParallelOptions options;
      options.precision = precision, options.recompute = recompute;
      const BytesByUse peak = peak_of_one_forward_backward(world, config, options);
      TransformerSpec spec = gpt_spec(test_shape(kMemoryLayers), kT);
      spec.precision = precision, spec.global_batch = kSequencesPerReplica * config.data;
      EXPECT_EQ(double(peak[size_t(DeviceUse::activations)]),
                memory_per_device(spec, config, executor_memory_stack()).activations);
    }
  }
}

// With Z sharding in 2-byte training the layers gather their blocks as stored, in 2 bytes (as the
// cost model prices the all-gather), and compute dW in fp32: the stage's pools hold what the memory
// model says (axo_buffers.h), to the byte, with the overlaps (the current and the prefetched block,
// this dW and the one reducing) and without (one of each); in fp32 one pool of three or one. On z 2
// (times x 2 at 4 ranks).
TEST(MixedPrecisionTest, TheMemoryModelHoldsTheZPools) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() % 2 != 0) GTEST_SKIP() << "z = 2 (x the rest)";
  for (Precision precision : {Precision::fp32, Precision::bf16, Precision::fp16}) {
    for (bool overlap : {true, false}) {
      SCOPED_TRACE(std::string(to_string(precision)) + (overlap ? ", overlapped" : ", not overlapped"));
      ParallelConfig config;
      config.z = 2, config.x = world.size() / 2, config.microbatch = kMicrobatch, config.overlap = overlap;
      ParallelOptions options;
      options.precision = precision, options.overlap = overlap ? Overlap{} : Overlap::none();
      const BytesByUse peak = peak_of_one_forward_backward(world, config, options);
      TransformerSpec spec = gpt_spec(test_shape(kMemoryLayers), kT);
      spec.precision = precision, spec.global_batch = kSequencesPerReplica;
      EXPECT_EQ(double(peak[size_t(DeviceUse::comm_buffers)]),
                memory_per_device(spec, config, executor_memory_stack()).comm_buffers);
    }
  }
}

// Grids of this launch's ranks that shard the model state with one data rank: over Z (and X), over
// Y with sequence parallelism, a pipeline of Z-sharded stages.
std::vector<ParallelConfig> sharding_grids(int64_t ranks) {
  std::vector<ParallelConfig> grids;
  auto add = [&](int64_t pipeline, int64_t x, int64_t y, int64_t z, bool sequence_parallel) {
    ParallelConfig c;
    c.pipeline = pipeline, c.x = x, c.y = y, c.z = z, c.sequence_parallel = sequence_parallel;
    c.microbatch = kMicrobatch;
    grids.push_back(c);
  };
  if (ranks % 2 != 0) return grids;
  add(1, ranks / 2, 1, 2, false);
  add(1, 1, ranks, 1, true);
  add(2, 1, 1, ranks / 2, false);
  return grids;
}

// The model state and the activations the executor holds at its peak on grids that shard the model
// state are the memory model's (its layout: model/axo_parameters.h; the linears over x·y·z, the
// norms, biases and embeddings whole over Z, the head's copy of wte on a pipeline's last stage; in
// 2-byte training the norms' fp32 windows), to the byte, in fp32 and in bf16, on each rank's stage;
// so are the communication buffers on one stage (in bf16 with the fp32 copies of what Z or Y sums).
// On a pipeline the messages in flight at the peak, and whether the peak comes before the tied
// embedding's sum or during it, depend on timing: the model's buffers, each part at its most, bound
// what the peak holds.
TEST(MixedPrecisionTest, TheMemoryModelHoldsWhatShardedGridsHold) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  const std::vector<ParallelConfig> grids = sharding_grids(world.size());
  if (grids.empty()) GTEST_SKIP() << "an even number of ranks";
  for (const ParallelConfig& config : grids) {
    for (Precision precision : {Precision::fp32, Precision::bf16}) {
      SCOPED_TRACE(std::string(to_string(precision)) + ": pipeline " + std::to_string(config.pipeline) + " x " +
                   std::to_string(config.x) + " y " + std::to_string(config.y) + " z " + std::to_string(config.z));
      ParallelOptions options;
      options.precision = precision;
      const BytesByUse peak = peak_of_one_forward_backward(world, config, options);
      TransformerSpec spec = gpt_spec(test_shape(kMemoryLayers), kT);
      spec.precision = precision, spec.global_batch = kSequencesPerReplica;
      const PipelineSplit split = split_pipeline(spec, config.pipeline, 1);
      const int64_t stage = ProcessGrid(world, config).coords().pipeline;
      const MemoryBreakdown predicted = stage_memory(spec, config, split, stage, executor_memory_stack());
      EXPECT_EQ(double(peak[size_t(DeviceUse::weights)]), predicted.weights);
      EXPECT_EQ(double(peak[size_t(DeviceUse::gradients)]), predicted.gradients);
      EXPECT_EQ(double(peak[size_t(DeviceUse::optimizer)]), predicted.optimizer);
      EXPECT_EQ(double(peak[size_t(DeviceUse::activations)]), predicted.activations);
      if (config.pipeline == 1) {
        EXPECT_EQ(double(peak[size_t(DeviceUse::comm_buffers)]), predicted.comm_buffers);
      } else {
        EXPECT_LE(double(peak[size_t(DeviceUse::comm_buffers)]), predicted.comm_buffers);
      }
    }
  }
}

// The data-parallel reduction's buffers (axo_buffers.h) are the memory model's for axo's executor,
// in fp32 and bf16, with each zero: zero 0's fp32 bucket copies (2-byte training), zero 1's received
// pieces (and 2-byte sends), zero 2's one layer in flight and the buckets it fills; each linear's
// fp32 bias column in bf16. To the byte (at 2 and 4 data ranks the units divide into whole
// pieces; zero 2's bucket in flight is a layer's linears', 1.5 x its 12,288 weights, its 416 norm
// and bias parameters a bucket of their own), but zero 2's gradients: within 1%, the buckets the
// backward fills at the peak.
TEST(MixedPrecisionTest, TheMemoryModelHoldsTheDataParallelBuffers) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() == 1) GTEST_SKIP() << "one data rank reduces nothing";
  for (Precision precision : {Precision::fp32, Precision::bf16}) {
    for (int zero : {0, 1, 2}) {
      SCOPED_TRACE(std::string(to_string(precision)) + ", zero " + std::to_string(zero));
      ParallelConfig config;
      config.data = world.size(), config.microbatch = kMicrobatch, config.zero = zero;
      ParallelOptions options;
      options.precision = precision;
      const BytesByUse peak = peak_of_one_forward_backward(world, config, options);
      const GptShape shape = test_shape(kMemoryLayers);
      TransformerSpec spec = gpt_spec(shape, kT);
      spec.precision = precision, spec.global_batch = kSequencesPerReplica * config.data;
      const MemoryBreakdown predicted = memory_per_device(spec, config, executor_memory_stack());
      EXPECT_EQ(double(peak[size_t(DeviceUse::comm_buffers)]), predicted.comm_buffers);
      if (zero < 2) {
        EXPECT_EQ(double(peak[size_t(DeviceUse::gradients)]), predicted.gradients);
      } else {
        EXPECT_NEAR(double(peak[size_t(DeviceUse::gradients)]), predicted.gradients, 0.01 * predicted.gradients);
      }
    }
  }
}

}  // namespace
}  // namespace axo
