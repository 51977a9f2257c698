// The 4D-parallel GPT against the serial one (the oracle): for each grid
// that fits the launch (interleaved and unequal pipeline stages included),
// two training steps give the serial executor's loss, gradients and updated
// weights within fp32 round-off.
//
// Context parallelism (ring attention over 2 and 4 ranks, with data, tensor
// and pipeline parallelism) is among the grids.
//
// Tolerance: per llm.c tensor, max |parallel − serial| ≤ 2e-5 · max |serial|
// (a relative error at the tensor's scale; the sums run in another order).
// A weight after AdamW may differ by more, by what that gradient tolerance δ
// allows each step: Adam divides a gradient g by its own magnitude, so δ
// moves lr · g / (|g| + ε) by up to about lr · δ / (|g| + ε), at most 2 · lr
// (the step's sign flipped). A gradient near ε (1e-8) leaves its weight to
// the round-off: seen on biases, whose updates start from zero, on an MLP
// weight whose gradient sums to 6e-8 from terms a thousand times larger
// (how much of the round-off survives depends on the BLAS kernel), and with
// ring attention on the key bias, whose exact gradient is zero (a softmax row
// is invariant to a shift of its scores) and which carries the round-off of
// the probabilities recomputed from the stored log-sum-exp, P = exp(s − lse),
// as flash attention does.
// axo-test-ranks: 2 3 4 8
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>

#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/adamw.h"
#include "executor/cpu/gemm.h"
#include "executor/gpt/gpt.h"
#include "executor/parallel/parallel_gpt.h"
#include "model/byte_size.h"
#include "model/error.h"
#include "model/memory_model.h"

namespace axo {
namespace {

constexpr int64_t kT = 8, kSequencesPerReplica = 8, kMicrobatch = 2, kSteps = 2;
constexpr double kTolerance = 2e-5;
constexpr double kLr = 1e-3, kDecay = 0.1, kClip = 1.0;
const double kAdamEpsilon = cpu::AdamWSettings{}.epsilon;  // executor/cpu/adamw.h

GptShape test_shape(int64_t layers = 4) {
  GptShape g;
  g.layers = layers, g.heads = 4, g.channels = 32, g.max_seq = 16, g.vocab = 100, g.padded_vocab = 128;
  return g;
}

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

struct Batch {
  std::vector<int> inputs, targets;  // [sequences · T] each
};

Batch make_batch(int64_t sequences, int step) {
  std::mt19937 rng(1000 + step);
  std::uniform_int_distribution<int> token(0, int(test_shape().vocab) - 1);
  Batch b;
  for (int64_t i = 0; i < sequences * kT; ++i) b.inputs.push_back(token(rng)), b.targets.push_back(token(rng));
  return b;
}

struct Result {
  std::vector<double> losses, norms;
  std::vector<float> first_gradients, parameters;
  // This rank's: local parameters, bytes in use by DeviceUse on the device and on the host, peaks.
  int64_t local_parameters = 0;
  std::array<int64_t, kDeviceUses> device{}, host{};
  int64_t device_peak = 0, host_peak = 0;
  int64_t activations_at_peak = 0;  // the device's activations when it held most
  int64_t buffers_at_peak = 0;      // and its communication buffers then
  int64_t stage = 0;                // this rank's pipeline stage
};

// The serial executor, as the single-rank trainer runs a step.
Result run_serial(int64_t data, int64_t layers = 4, int64_t sequences_per_replica = kSequencesPerReplica) {
  const GptShape shape = test_shape(layers);
  Gpt model(shape);
  model.initialize(7);
  std::vector<float> m(model.parameters().size(), 0.0f), v = m;
  const auto sizes = gpt_tensor_sizes(shape);
  static constexpr bool kDecayed[kGptTensors] = {true, true, false, false, true, false, true, false,
                                                 false, false, true, false, true, false, false, false};
  Result r;
  const int64_t sequences = sequences_per_replica * data, accumulation = sequences / kMicrobatch;
  for (int step = 0; step < kSteps; ++step) {
    const Batch b = make_batch(sequences, step);
    model.zero_gradients();
    double loss = 0;
    for (int64_t k = 0; k < accumulation; ++k) {
      loss += model.forward(b.inputs.data() + k * kMicrobatch * kT, b.targets.data() + k * kMicrobatch * kT,
                            kMicrobatch, kT);
      model.backward();
    }
    for (float& g : model.gradients()) g /= float(accumulation);
    r.losses.push_back(loss / double(accumulation));
    if (step == 0) r.first_gradients = model.gradients();
    double sum = 0;
    for (float g : model.gradients()) sum += double(g) * g;
    const double norm = std::sqrt(sum);
    r.norms.push_back(norm);
    if (norm > kClip) {
      for (float& g : model.gradients()) g *= float(kClip / norm);
    }
    size_t offset = 0;
    for (int i = 0; i < kGptTensors; ++i) {
      cpu::AdamWSettings s;
      s.learning_rate = float(kLr);
      s.weight_decay = kDecayed[i] ? float(kDecay) : 0.0f;
      cpu::adamw_update(model.parameters().data() + offset, model.gradients().data() + offset, m.data() + offset,
                        v.data() + offset, size_t(sizes[size_t(i)]), s, step + 1);
      offset += size_t(sizes[size_t(i)]);
    }
  }
  r.parameters = model.parameters();
  return r;
}

Result run_parallel(const ParallelConfig& config, const ParallelOptions& options, int64_t layers = 4,
                    int64_t sequences_per_replica = kSequencesPerReplica) {
  const GptShape shape = test_shape(layers);
  MpiCommunicator world(MPI_COMM_WORLD);
  ProcessGrid grid(world, config);
  ParallelGpt model(shape, grid, options);
  Gpt reference(shape);
  reference.initialize(7);
  model.load(reference.parameters());
  Result r;
  const int64_t sequences = sequences_per_replica * config.data;
  for (int step = 0; step < kSteps; ++step) {
    const Batch b = make_batch(sequences, step);
    const int64_t first = grid.coords().data * sequences_per_replica * kT;
    r.losses.push_back(model.forward_backward(b.inputs.data() + first, b.targets.data() + first,
                                              sequences_per_replica, kT, kMicrobatch));
    if (step == 0) r.first_gradients = model.gather(model.gradients().data());
    r.norms.push_back(model.clip_gradients(kClip));
    model.adamw(step + 1, kLr, kDecay);
  }
  r.parameters = model.gather(model.parameters().data());
  r.local_parameters = model.layout().size();
  for (int i = 0; i < kDeviceUses; ++i) {
    r.device[size_t(i)] = model.device_memory().in_use(DeviceUse(i));
    r.host[size_t(i)] = model.host_memory().in_use(DeviceUse(i));
  }
  r.device_peak = model.device_memory().peak(), r.host_peak = model.host_memory().peak();
  r.activations_at_peak = model.device_memory().peak_share(DeviceUse::activations);
  r.buffers_at_peak = model.device_memory().peak_share(DeviceUse::comm_buffers);
  r.stage = grid.coords().pipeline;
  return r;
}

// Calls visit(i, begin, end) with each llm.c tensor's range of the flat vectors, in llm.c order.
template <class Visit>
void for_each_tensor(int64_t layers, Visit visit) {
  const auto sizes = gpt_tensor_sizes(test_shape(layers));
  size_t begin = 0;
  for (int i = 0; i < kGptTensors; ++i) {
    const size_t end = begin + size_t(sizes[size_t(i)]);
    visit(i, begin, end);
    begin = end;
  }
}

// The largest |v[j]| over [begin, end).
double largest(const std::vector<float>& v, size_t begin, size_t end) {
  double scale = 0;
  for (size_t j = begin; j < end; ++j) scale = std::max(scale, double(std::fabs(v[j])));
  return scale;
}

// Per llm.c tensor, the largest difference relative to the tensor's largest value.
void expect_close(const std::vector<float>& parallel, const std::vector<float>& serial, const std::string& what,
                  int64_t layers) {
  ASSERT_EQ(parallel.size(), serial.size());
  for_each_tensor(layers, [&](int i, size_t begin, size_t end) {
    double worst = 0;
    for (size_t j = begin; j < end; ++j) worst = std::max(worst, double(std::fabs(parallel[j] - serial[j])));
    EXPECT_LE(worst, kTolerance * largest(serial, begin, end)) << what << ", tensor " << i << " (llm.c order)";
  });
}

// Per llm.c tensor, per weight: within kTolerance of the tensor's scale, plus
// what the gradients' tolerance δ allows AdamW's steps (the header):
// kSteps · lr · min(2, δ / (|g| + ε)), g the serial run's first gradient.
void expect_weights_close(const std::vector<float>& parallel, const std::vector<float>& serial,
                          const std::vector<float>& gradients, int64_t layers) {
  ASSERT_EQ(parallel.size(), serial.size());
  ASSERT_EQ(gradients.size(), serial.size());
  for_each_tensor(layers, [&](int i, size_t begin, size_t end) {
    const double scale = largest(serial, begin, end), delta = kTolerance * largest(gradients, begin, end);
    int outside = 0;
    for (size_t j = begin; j < end; ++j) {
      const double adam = kSteps * kLr * std::min(2.0, delta / (std::fabs(gradients[j]) + kAdamEpsilon));
      outside += std::fabs(parallel[j] - serial[j]) > kTolerance * scale + adam;
    }
    EXPECT_EQ(outside, 0) << "weights after step 2, tensor " << i << " (llm.c order)";
  });
}

void expect_matches_serial(const Result& parallel, const Result& serial, int64_t layers) {
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(parallel.losses[size_t(s)], serial.losses[size_t(s)], 1e-5 * serial.losses[size_t(s)]) << "step " << s;
    EXPECT_NEAR(parallel.norms[size_t(s)], serial.norms[size_t(s)], 1e-5 * serial.norms[size_t(s)]) << "step " << s;
  }
  expect_close(parallel.first_gradients, serial.first_gradients, "gradients after step 1", layers);
  expect_weights_close(parallel.parameters, serial.parameters, serial.first_gradients, layers);
}

struct Case {
  std::string name;
  int64_t pipeline, data, z, y, x;
  Schedule schedule = Schedule::message_driven;
  std::string order = "xyzdp";
  Overlap overlap = {};
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  int64_t interleave = 1, layers = 4, sequences = kSequencesPerReplica;
  int64_t context = 1;
};

Case with_context(int64_t context, Case c) {
  c.context = context;
  return c;
}

std::vector<Case> cases() {
  using S = Schedule;
  return {
      {"x2", 1, 1, 1, 1, 2},
      {"y2", 1, 1, 1, 2, 1},
      {"z2", 1, 1, 2, 1, 1},
      {"z2_no_overlap", 1, 1, 2, 1, 1, S::message_driven, "xyzdp", Overlap::none()},
      {"data2", 1, 2, 1, 1, 1},
      {"pipe2_message_driven", 2, 1, 1, 1, 1, S::message_driven},
      {"pipe2_1f1b", 2, 1, 1, 1, 1, S::one_f_one_b},
      {"x2y2", 1, 1, 1, 2, 2},
      {"x2z2", 1, 1, 2, 1, 2},
      {"y2z2_recompute", 1, 1, 2, 2, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::full},
      {"pipe4_message_driven", 4, 1, 1, 1, 1, S::message_driven},
      {"pipe4_1f1b", 4, 1, 1, 1, 1, S::one_f_one_b},
      {"pipe2_data2_order_pdzyx", 2, 2, 1, 1, 1, S::message_driven, "pdzyx"},
      {"pipe2_x2y2", 2, 1, 1, 2, 2, S::message_driven},
      {"pipe2_data2_z2_1f1b", 2, 2, 2, 1, 1, S::one_f_one_b, "zdpxy"},
      {"pipe2_y2_x2_message_driven_order_yxpzd", 2, 1, 1, 2, 2, S::message_driven, "yxpzd"},
      {"y2_sequence_parallel", 1, 1, 1, 2, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, true},
      {"y4_sequence_parallel_no_overlap", 1, 1, 1, 4, 1, S::message_driven, "xyzdp", Overlap::none(), Recompute::none, true},
      {"x2y2z2_ors_oag_without_oar", 1, 1, 2, 2, 2, S::message_driven, "xyzdp", Overlap{false, true, true}},
      {"x2z2_oar_only", 1, 1, 2, 1, 2, S::message_driven, "zxydp", Overlap{true, false, false}},
      {"pipe2_y2_sequence_parallel_recompute", 2, 1, 1, 2, 1, S::one_f_one_b, "yxzdp", Overlap{}, Recompute::full, true},
      {"pipe2_data2_y2_sequence_parallel", 2, 2, 1, 2, 1, S::message_driven, "ypdxz", Overlap{}, Recompute::none, true},
      // Sequence parallelism with z > 1 (torchtitan's FSDP + TP): each Z rank's rows split over Y.
      {"y2z2_sequence_parallel", 1, 1, 2, 2, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, true},
      {"z2y2_sequence_parallel_no_overlap_recompute", 1, 1, 2, 2, 1, S::message_driven, "zyxdp", Overlap::none(),
       Recompute::full, true},
      {"pipe2_y2z2_sequence_parallel_1f1b", 2, 1, 2, 2, 1, S::one_f_one_b, "yzxdp", Overlap{}, Recompute::none, true},
      {"data2_y2z2_sequence_parallel", 1, 2, 2, 2, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, true},
      {"y4z2_sequence_parallel_selective", 1, 1, 2, 4, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::selective,
       true},
      // Interleaved stages (chunk k = c·P + s) and unequal splits (stage_partition.h).
      {"pipe2_interleave2_message_driven", 2, 1, 1, 1, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, false, 2},
      {"pipe2_interleave2_1f1b", 2, 1, 1, 1, 1, S::one_f_one_b, "xyzdp", Overlap{}, Recompute::none, false, 2},
      {"pipe2_interleave3_7_layers_message_driven", 2, 1, 1, 1, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, false, 3, 7},
      {"pipe2_interleave3_7_layers_1f1b", 2, 1, 1, 1, 1, S::one_f_one_b, "xyzdp", Overlap{}, Recompute::none, false, 3, 7},
      {"pipe2_5_layers_1f1b", 2, 1, 1, 1, 1, S::one_f_one_b, "xyzdp", Overlap{}, Recompute::none, false, 1, 5},
      {"pipe3_7_layers_message_driven", 3, 1, 1, 1, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, false, 1, 7},
      {"pipe3_7_layers_1f1b", 3, 1, 1, 1, 1, S::one_f_one_b, "xyzdp", Overlap{}, Recompute::none, false, 1, 7},
      {"pipe3_interleave2_7_layers_message_driven", 3, 1, 1, 1, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, false, 2, 7, 6},
      {"pipe3_interleave2_7_layers_1f1b_recompute", 3, 1, 1, 1, 1, S::one_f_one_b, "xyzdp", Overlap{}, Recompute::full, false, 2, 7, 6},
      {"pipe4_interleave2_message_driven", 4, 1, 1, 1, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, false, 2, 8},
      {"pipe4_interleave2_1f1b", 4, 1, 1, 1, 1, S::one_f_one_b, "xyzdp", Overlap{}, Recompute::none, false, 2, 8},
      {"pipe2_data2_interleave2_1f1b", 2, 2, 1, 1, 1, S::one_f_one_b, "pdzyx", Overlap{}, Recompute::none, false, 2},
      {"pipe2_x2_interleave3_6_layers_message_driven", 2, 1, 1, 1, 2, S::message_driven, "xyzdp", Overlap{}, Recompute::none, false, 3, 6},
      {"pipe2_y2_sequence_parallel_interleave2_recompute", 2, 1, 1, 2, 1, S::message_driven, "yxzdp", Overlap{}, Recompute::full, true, 2},
      {"pipe2_x2y2_interleave2_1f1b", 2, 1, 1, 2, 2, S::one_f_one_b, "xyzdp", Overlap{}, Recompute::none, false, 2},
      {"pipe4_data2_interleave3_13_layers_message_driven", 4, 2, 1, 1, 1, S::message_driven, "xyzdp", Overlap{}, Recompute::none, false, 3, 13},
      // Context parallelism (ring attention, T = 8: chunks of 2 with c = 2, of 1 with c = 4).
      with_context(2, {"context2", 1, 1, 1, 1, 1, S::message_driven, "xyzcdp", Overlap{}}),
      with_context(2, {"context2_recompute", 1, 1, 1, 1, 1, S::message_driven, "xyzcdp", Overlap{}, Recompute::full}),
      with_context(4, {"context4", 1, 1, 1, 1, 1, S::message_driven, "xyzcdp", Overlap{}}),
      with_context(2, {"context2_data2", 1, 2, 1, 1, 1, S::message_driven, "cxyzdp", Overlap{}}),
      with_context(2, {"context2_y2", 1, 1, 1, 2, 1, S::message_driven, "xyzcdp", Overlap{}}),
      with_context(2, {"context2_x2_z2", 1, 1, 2, 1, 2, S::message_driven, "czxydp", Overlap{}}),
      with_context(2, {"context2_y2_sequence_parallel", 1, 1, 1, 2, 1, S::message_driven, "ycxzdp", Overlap{},
                       Recompute::none, true}),
      with_context(2, {"pipe2_context2_1f1b", 2, 1, 1, 1, 1, S::one_f_one_b, "xyzcdp", Overlap{}}),
      with_context(2, {"pipe2_context2_interleave2_message_driven", 2, 1, 1, 1, 1, S::message_driven, "pcxyzd",
                       Overlap{}, Recompute::none, false, 2}),
      with_context(4, {"context4_data2", 1, 2, 1, 1, 1, S::message_driven, "xyzcdp", Overlap{}}),
      with_context(2, {"pipe2_context2_data2", 2, 2, 1, 1, 1, S::message_driven, "dcpxyz", Overlap{}}),
      with_context(2, {"context2_x2y2_selective", 1, 1, 1, 2, 2, S::message_driven, "xyzcdp", Overlap{},
                       Recompute::selective}),
  };
}

ParallelConfig config_of(const Case& c) {
  ParallelConfig config;
  config.pipeline = c.pipeline, config.data = c.data, config.z = c.z, config.y = c.y, config.x = c.x;
  config.microbatch = kMicrobatch;
  config.order = parse_order(c.order, "test");
  config.sequence_parallel = c.sequence_parallel;
  config.interleave = c.interleave;
  config.context = c.context;
  return config;
}

// The cases named `names` whose grid has this launch's ranks.
std::vector<Case> cases_of_this_launch(std::initializer_list<std::string_view> names) {
  std::vector<Case> chosen;
  for (const Case& c : cases()) {
    if (std::find(names.begin(), names.end(), c.name) == names.end()) continue;
    if (config_of(c).gpus() == world_size()) chosen.push_back(c);
  }
  return chosen;
}

// A case's schedule and overlap, at the tests' sequence length.
ParallelOptions options_of(const Case& c) {
  ParallelOptions options;
  options.schedule.schedule = c.schedule;
  options.overlap = c.overlap;
  options.seq = kT;
  return options;
}

// The memory model's stage `stage` for a case trained as `config`, in axo's executor's layout.
MemoryBreakdown predicted_stage_memory(const Case& c, const ParallelConfig& config, int64_t stage) {
  TransformerSpec spec = gpt_spec(test_shape(c.layers), kT);
  spec.global_batch = c.sequences * c.data;
  const PipelineSplit split = split_pipeline(spec, config.pipeline, config.interleave);
  return stage_memory(spec, config, split, stage, executor_memory_stack(c.schedule));
}

TEST(ParallelGptTest, MatchesTheSerialExecutorOnEveryGridOfThisLaunch) {
  cpu::set_gemm_threads(1);
  int ran = 0;
  for (const Case& c : cases()) {
    const ParallelConfig config = config_of(c);
    if (config.gpus() != world_size()) continue;
    SCOPED_TRACE(c.name);
    ParallelOptions options;
    options.schedule.schedule = c.schedule;
    options.overlap = c.overlap;
    options.recompute = c.recompute;
    options.seq = kT;
    const Result parallel = run_parallel(config, options, c.layers, c.sequences);
    expect_matches_serial(parallel, run_serial(c.data, c.layers, c.sequences), c.layers);
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no grid of " << world_size() << " ranks";
}

// The memory model's layout of axo's executor (ActivationLayout::axo, model/axo_activations.h) is
// what the executor holds at its peak, byte for byte: on one-stage grids of every kind (x, y, z,
// sequence parallelism, data; each recompute; mixed_precision_test: in 2-byte training), on each
// stage of 1F1B pipelines, interleaved ones too, and on the first and last stage of
// message-driven ones without interleaving; the message-driven schedule's other stages hold at
// most the model's bound, min(m, p) microbatches of each chunk, as many as their timing lets in
// (pipe3_7_layers' middle stage: the bound, pipe4's: 1F1B's p − s). Chunks of unequal layers too
// (pipe2_interleave3_7_layers_1f1b's first stage, whose warm-up holds more of its larger chunk,
// had been 1.15x a model that took each chunk as 1/v of the stage). Not asserted: ring
// attention's own buffers.
TEST(ParallelGptTest, TheMemoryModelHoldsTheExecutorsActivations) {
  cpu::set_gemm_threads(1);
  int ran = 0;
  for (const Case& c : cases()) {
    ParallelConfig config = config_of(c);
    if (config.gpus() != world_size() || c.context > 1) continue;
    SCOPED_TRACE(c.name);
    ParallelOptions options = options_of(c);
    options.recompute = c.recompute;
    const Result r = run_parallel(config, options, c.layers, c.sequences);
    config.recompute = c.recompute;
    const double predicted = predicted_stage_memory(c, config, r.stage).activations;
    const bool end = r.stage == 0 || r.stage == c.pipeline - 1;
    if (c.schedule == Schedule::one_f_one_b || (end && c.interleave == 1)) {
      EXPECT_EQ(double(r.activations_at_peak), predicted) << "stage " << r.stage;
    } else {
      EXPECT_LE(double(r.activations_at_peak), predicted) << "stage " << r.stage;
    }
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no grid of " << world_size() << " ranks";
}

// Z sharding's saving holds for the communication buffers: a stage holds the weight and dW blocks
// in flight at once (linear_4d.h), so twice the layers or the microbatches hold the same bytes.
// (ORS had left each layer's whole dW block reducing until its next microbatch: every layer's
// block at once, 448,512 bytes on z2's 4 layers where this holds 57,344.) The memory model's
// buffers for axo's executor (axo_buffers.h) are these to the byte where the overlaps are all on or
// all off (its one switch), with a pipeline to one activation message.
TEST(ParallelGptTest, ZShardedBuffersDoNotGrowWithTheLayersOrTheMicrobatches) {
  cpu::set_gemm_threads(1);
  const std::vector<Case> chosen = cases_of_this_launch({"z2", "z2_no_overlap", "x2z2", "y2z2_sequence_parallel",
                                                         "z2y2_sequence_parallel_no_overlap_recompute",
                                                         "pipe2_data2_z2_1f1b", "x2y2z2_ors_oag_without_oar"});
  for (const Case& c : chosen) {
    SCOPED_TRACE(c.name);
    ParallelConfig config = config_of(c);
    ParallelOptions options = options_of(c);
    options.recompute = c.recompute;
    const Result base = run_parallel(config, options, c.layers, c.sequences);
    const Result deeper = run_parallel(config, options, 2 * c.layers, c.sequences);
    const Result more_microbatches = run_parallel(config, options, c.layers, 2 * c.sequences);
    EXPECT_GT(base.buffers_at_peak, 0);
    // With a pipeline, how many activation messages wait at the peak depends on timing: one either way.
    const double message = config.pipeline > 1 ? 4.0 * double(kMicrobatch * kT * test_shape().channels) : 0;
    EXPECT_NEAR(double(deeper.buffers_at_peak), double(base.buffers_at_peak), message);
    EXPECT_NEAR(double(more_microbatches.buffers_at_peak), double(base.buffers_at_peak), message);
    const bool all_on = c.overlap == Overlap{}, all_off = c.overlap == Overlap::none();
    if (!all_on && !all_off) continue;
    config.overlap = all_on, config.recompute = c.recompute;
    const double predicted = predicted_stage_memory(c, config, base.stage).comm_buffers;
    EXPECT_NEAR(predicted, double(base.buffers_at_peak), message);
  }
  if (chosen.empty()) GTEST_SKIP() << "no Z-sharded grid of " << world_size() << " ranks";
}

// A slow stage (with jitter, so the message-driven order changes from run
// to run) changes neither the losses nor the weights, under both schedules,
// with and without interleaved stages; nothing deadlocks.
TEST(ParallelGptTest, ADelayedStageChangesNothingButTime) {
  const int64_t P = world_size();
  if (P != 2 && P != 4) GTEST_SKIP() << "a pipeline over every rank, for 2 or 4 ranks";
  cpu::set_gemm_threads(1);
  for (int64_t interleave : {1, 2, 3}) {
    const int64_t layers = P * interleave + 1;  // unequal chunks
    SCOPED_TRACE("interleave " + std::to_string(interleave) + ", " + std::to_string(layers) + " layers");
    ParallelConfig config;
    config.pipeline = P, config.interleave = interleave, config.microbatch = kMicrobatch;
    Result baseline;
    for (Schedule schedule : {Schedule::message_driven, Schedule::one_f_one_b}) {
      for (int64_t delayed : {int64_t(-1), int64_t(0), P - 1}) {
        ParallelOptions options;
        options.seq = kT;
        options.schedule.schedule = schedule;
        options.schedule.delayed_stage = delayed;
        options.schedule.delay_s = 0.002;
        options.schedule.jitter_s = 0.004;
        const Result r = run_parallel(config, options, layers);
        if (baseline.losses.empty()) {
          baseline = r;
          expect_matches_serial(baseline, run_serial(1, layers), layers);
          continue;
        }
        // The same arithmetic in the same order on every rank: bit-identical.
        EXPECT_EQ(r.losses, baseline.losses) << to_string(schedule) << ", stage " << delayed << " delayed";
        EXPECT_EQ(r.parameters, baseline.parameters) << to_string(schedule) << ", stage " << delayed << " delayed";
      }
    }
  }
}

// Offload on and off train the same model bit for bit (fp32: the same
// operations in the same order), on grids with data parallelism, a pipeline
// (the tied embedding's reduction) and Z sharding; the optimizer state's 8
// bytes per parameter leave the device for the host.
TEST(ParallelGptTest, OffloadTrainsTheSameModelWithTheOptimizerStateOnTheHost) {
  cpu::set_gemm_threads(1);
  const std::vector<Case> chosen =
      cases_of_this_launch({"data2", "pipe2_message_driven", "pipe2_data2_order_pdzyx", "pipe4_1f1b",
                            "pipe2_data2_z2_1f1b", "x2y2z2_ors_oag_without_oar", "pipe3_7_layers_1f1b",
                            "pipe2_interleave2_1f1b"});
  for (const Case& c : chosen) {
    ParallelConfig config = config_of(c);
    SCOPED_TRACE(c.name);
    ParallelOptions options = options_of(c);
    const Result on_device = run_parallel(config, options, c.layers, c.sequences);
    config.offload = true;
    options.optimizer_threads = 3;
    const Result offloaded = run_parallel(config, options, c.layers, c.sequences);
    EXPECT_EQ(offloaded.losses, on_device.losses);
    EXPECT_EQ(offloaded.norms, on_device.norms);
    EXPECT_EQ(offloaded.first_gradients, on_device.first_gradients);
    EXPECT_EQ(offloaded.parameters, on_device.parameters);

    const int64_t n = on_device.local_parameters;
    using U = DeviceUse;
    auto at = [](const std::array<int64_t, kDeviceUses>& bytes, U use) { return bytes[size_t(use)]; };
    EXPECT_EQ(at(on_device.device, U::weights), 4 * n);
    EXPECT_EQ(at(on_device.device, U::gradients), 4 * n);
    EXPECT_EQ(at(on_device.device, U::optimizer), 8 * n);
    EXPECT_EQ(at(offloaded.device, U::weights), 4 * n);
    EXPECT_EQ(at(offloaded.device, U::gradients), 4 * n);
    EXPECT_EQ(at(offloaded.device, U::optimizer), 0);
    EXPECT_EQ(on_device.host_peak, 0);
    // The host: fp32 master weights, the gradients brought down, the two moments.
    EXPECT_EQ(at(offloaded.host, U::weights), 4 * n);
    EXPECT_EQ(at(offloaded.host, U::gradients), 4 * n);
    EXPECT_EQ(at(offloaded.host, U::optimizer), 8 * n);
    // Activations and buffers are the same, so the peak drops by the moments;
    // with a pipeline, by about that: how many sends wait at the peak depends on timing.
    if (config.pipeline == 1) {
      EXPECT_EQ(on_device.device_peak - offloaded.device_peak, 8 * n);
    } else {
      EXPECT_LT(offloaded.device_peak, on_device.device_peak);
    }
    EXPECT_GT(at(on_device.device, U::activations) + at(on_device.device, U::comm_buffers), 0);
  }
  EXPECT_FALSE(chosen.empty()) << "no offload grid of " << world_size() << " ranks";
}

// Selective recompute rebuilds the attention probabilities in backward from
// the stashed q, k, v: the same model bit for bit, with none of the
// probabilities stashed. With one stage one stash is kept (reused by each
// microbatch), so the activations shrink by exactly the layers' probabilities
// [Bz, NHy, T, T] but one layer's, which the recompute holds.
TEST(ParallelGptTest, SelectiveRecomputeTrainsTheSameModelWithoutStashingAttentionProbabilities) {
  cpu::set_gemm_threads(1);
  const std::vector<Case> chosen = cases_of_this_launch(
      {"data2", "x2y2", "y2_sequence_parallel", "pipe3_7_layers_1f1b", "pipe2_interleave2_message_driven",
       "pipe4_interleave2_1f1b", "x2y2z2_ors_oag_without_oar"});
  for (const Case& c : chosen) {
    const ParallelConfig config = config_of(c);
    SCOPED_TRACE(c.name);
    ParallelOptions options;
    options.schedule.schedule = c.schedule;
    options.seq = kT;
    const Result kept = run_parallel(config, options, c.layers, c.sequences);
    options.recompute = Recompute::selective;
    const Result recomputed = run_parallel(config, options, c.layers, c.sequences);
    EXPECT_EQ(recomputed.losses, kept.losses);
    EXPECT_EQ(recomputed.first_gradients, kept.first_gradients);
    EXPECT_EQ(recomputed.parameters, kept.parameters);
    const int64_t saved = kept.device[size_t(DeviceUse::activations)] - recomputed.device[size_t(DeviceUse::activations)];
    const int64_t probabilities = 4 * (kMicrobatch / c.z) * (test_shape().heads / c.y) * kT * kT;  // bytes, one layer
    if (c.pipeline == 1) {
      EXPECT_EQ(saved, (c.layers - 1) * probabilities);
    } else {
      EXPECT_GT(saved, 0);
    }
  }
  EXPECT_FALSE(chosen.empty()) << "no selective-recompute grid of " << world_size() << " ranks";
}

// Full recompute of each chunk's first layer only keeps the other layers' activations from the
// forward, which in fp32 are the recomputed ones bit for bit: the same model as full recompute,
// with those activations kept in place of their inputs.
TEST(ParallelGptTest, PartialRecomputeTrainsTheSameModelAsFullRecompute) {
  cpu::set_gemm_threads(1);
  const std::vector<Case> chosen = cases_of_this_launch(
      {"y2z2_recompute", "pipe2_y2_sequence_parallel_recompute", "pipe3_interleave2_7_layers_1f1b_recompute",
       "context2_recompute", "z2y2_sequence_parallel_no_overlap_recompute", "x2y2z2_ors_oag_without_oar"});
  for (const Case& c : chosen) {
    const ParallelConfig config = config_of(c);
    SCOPED_TRACE(c.name);
    ParallelOptions options = options_of(c);
    options.recompute = Recompute::full;
    const Result full = run_parallel(config, options, c.layers, c.sequences);
    options.recompute_layers = 1;
    const Result partial = run_parallel(config, options, c.layers, c.sequences);
    EXPECT_EQ(partial.losses, full.losses);
    EXPECT_EQ(partial.first_gradients, full.first_gradients);
    EXPECT_EQ(partial.parameters, full.parameters);
    const auto activations = [](const Result& r) { return r.device[size_t(DeviceUse::activations)]; };
    // A rank whose chunks hold one layer each recomputes all of them, as full recompute.
    EXPECT_GE(activations(partial), activations(full));
    if (c.pipeline == 1) {
      EXPECT_GT(activations(partial), activations(full));
    }
  }
  EXPECT_FALSE(chosen.empty()) << "no full-recompute grid of " << world_size() << " ranks";
  ParallelConfig config;
  config.data = world_size(), config.microbatch = kMicrobatch;
  ParallelOptions options;
  options.seq = kT, options.recompute = Recompute::selective, options.recompute_layers = 2;
  EXPECT_THROW(run_parallel(config, options), InputError);  // recompute_layers needs full recompute
}

// Full recompute keeps each layer's input alone and reruns one layer at a time in one layer's
// slot, the same model bit for bit: with one stage (one stash, reused by each microbatch) a model
// twice as deep holds exactly its extra layers' inputs [mr, Cx] more activations, in fp32, where
// keeping them all holds every extra layer whole, and against keeping them all it holds the
// inputs, the chunk's output and one layer where the kept run holds every layer.
TEST(ParallelGptTest, FullRecomputeHoldsEachLayersInputAndOneLayerAtATime) {
  cpu::set_gemm_threads(1);
  const std::vector<Case> chosen = cases_of_this_launch(
      {"data2", "y2z2_recompute", "y2_sequence_parallel", "x2y2", "context2_recompute", "y2z2_sequence_parallel",
       "x2y2z2_ors_oag_without_oar"});
  if (world_size() == 3) GTEST_SKIP() << "every 3-rank grid is a pipeline";
  const auto activations = [](const Result& r) { return r.device[size_t(DeviceUse::activations)]; };
  for (const Case& c : chosen) {
    const ParallelConfig config = config_of(c);
    SCOPED_TRACE(c.name);
    ParallelOptions options = options_of(c);
    const Result kept = run_parallel(config, options, 4), kept_deeper = run_parallel(config, options, 8);
    options.recompute = Recompute::full;
    const Result full = run_parallel(config, options, 4), full_deeper = run_parallel(config, options, 8);
    EXPECT_EQ(full.losses, kept.losses);
    EXPECT_EQ(full.first_gradients, kept.first_gradients);
    EXPECT_EQ(full.parameters, kept.parameters);
    const int64_t rows = (kMicrobatch / c.z) * (kT / c.context) / (c.sequence_parallel ? c.y : 1);
    const int64_t input = 4 * rows * (test_shape().channels / c.x);  // bytes of one layer's input
    EXPECT_EQ(activations(full_deeper) - activations(full), 4 * input);
    const int64_t layer = (activations(kept_deeper) - activations(kept)) / 4;  // one layer's, whole
    EXPECT_GT(layer, 8 * input);
    // Full recompute: the 4 layers' inputs and the chunk's output in the stash, the input again and one
    // layer in the rolling slot, the head once; kept: the input, 4 layers and the head.
    EXPECT_EQ(activations(kept) - activations(full), 3 * layer - 5 * input);
  }
  EXPECT_FALSE(chosen.empty()) << "no one-stage grid of " << world_size() << " ranks";
}

// A device limit: what does not fit is named, on every rank alike; offload
// makes room for a plan that did not fit.
TEST(ParallelGptTest, ADeviceLimitRejectsWhatDoesNotFitAndOffloadMakesRoom) {
  cpu::set_gemm_threads(1);
  ParallelConfig config;
  config.data = world_size(), config.microbatch = kMicrobatch;
  ParallelOptions options;
  options.seq = kT;
  config.offload = true;
  const Result measured = run_parallel(config, options);

  options.device_memory_bytes = 1024;
  try {
    run_parallel(config, options);
    FAIL() << "1 KiB held the model";
  } catch (const DeviceMemoryExhausted& e) {
    EXPECT_NE(std::string(e.what()).find("of weights does not fit"), std::string::npos) << e.what();
  }
  // The offloaded run's own peak: it fits exactly, and trains as before.
  options.device_memory_bytes = measured.device_peak;
  const Result again = run_parallel(config, options);
  EXPECT_EQ(again.losses, measured.losses);
  EXPECT_EQ(again.device_peak, measured.device_peak);
  // Without offload the moments take 8 bytes per parameter more than that;
  // in this shape they outweigh the step's activations and buffers, so the
  // second moment does not fit beside the first.
  const int64_t n = measured.local_parameters;
  ASSERT_LT(measured.device_peak - 8 * n, 8 * n) << "activations and buffers outweigh the moments";
  config.offload = false;
  try {
    run_parallel(config, options);
    FAIL() << "the moments fitted in the offloaded run's peak";
  } catch (const DeviceMemoryExhausted& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(format_bytes(double(4 * n)) + " of optimizer does not fit"), std::string::npos) << message;
    EXPECT_NE(message.find("optimizer " + format_bytes(double(4 * n)) + ","), std::string::npos) << message;
  }
}

TEST(ParallelGptTest, RejectsAGridThatDoesNotFitTheModel) {
  cpu::set_gemm_threads(1);
  MpiCommunicator world(MPI_COMM_WORLD);
  ParallelConfig config;
  config.y = world_size();
  GptShape shape = test_shape();
  shape.heads = 1, shape.channels = 32;
  ProcessGrid grid(world, config);
  if (world_size() > 1) {
    EXPECT_THROW(ParallelGpt(shape, grid, ParallelOptions{}), InputError);
  }
  ParallelConfig wrong = config;
  wrong.data = 3;
  EXPECT_THROW(ProcessGrid(world, wrong), InputError);
}

}  // namespace
}  // namespace axo
