// The sharded optimizer (zero_optimizer.h) against zero 0 on the same grid:
// zero 1 and 2 run the same operations, so they agree bit for bit; with
// data = 2 and no Z or Y part in a gradient's sum, the reduce-scatter adds
// the same two numbers as zero 0's all-reduce, so the weights equal zero 0's
// bit for bit as well; otherwise (a Z or Y part summed first, the tied
// embedding, four data ranks) the sums run in another order and agree to
// 1e-6 of each tensor's scale. The optimizer state is booked per shard:
// 8 bytes per parameter over D, on the host with offload.
// axo-test-ranks: 2 4
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/gpt/gpt.h"
#include "executor/parallel/parallel_gpt.h"
#include "executor/parallel/zero_optimizer.h"

namespace axo {
namespace {

constexpr int64_t kT = 8, kSequencesPerReplica = 4, kMicrobatch = 2, kSteps = 2;
constexpr double kLr = 1e-3, kDecay = 0.1, kClip = 0.5;  // the clip is active: the norm's scale reaches the weights

GptShape test_shape() {
  GptShape g;
  g.layers = 2, g.heads = 4, g.channels = 32, g.max_seq = 16, g.vocab = 100, g.padded_vocab = 128;
  return g;
}

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

struct Result {
  std::vector<double> losses, norms;
  std::vector<float> gradients, parameters, m, v;  // full vectors: the step-1 gradient, the end state
  int64_t local = 0, shard = 0;                    // elements: the local layout, this rank's shard
  BytesByUse device{}, host{};
};

Result train(const ParallelConfig& config, int threads = 1) {
  const GptShape shape = test_shape();
  MpiCommunicator world(MPI_COMM_WORLD);
  ProcessGrid grid(world, config);
  ParallelOptions options;
  options.seq = kT;
  options.optimizer_threads = threads;
  ParallelGpt model(shape, grid, options);
  Gpt reference(shape);
  reference.initialize(11);
  model.load(reference.parameters());
  Result r;
  const int64_t sequences = kSequencesPerReplica * config.data;
  for (int step = 0; step < kSteps; ++step) {
    std::mt19937 rng(500 + step);
    std::uniform_int_distribution<int> token(0, int(shape.vocab) - 1);
    std::vector<int> inputs(size_t(sequences * kT)), targets(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = token(rng), targets[i] = token(rng);
    const size_t first = size_t(grid.coords().data * kSequencesPerReplica * kT);
    r.losses.push_back(model.forward_backward(inputs.data() + first, targets.data() + first, kSequencesPerReplica, kT,
                                              kMicrobatch));
    if (step == 0) r.gradients = model.gathered_gradients();
    r.norms.push_back(model.clip_gradients(kClip));
    model.adamw(step + 1, kLr, kDecay);
  }
  r.parameters = model.gather(model.parameters().data());
  r.m = model.gathered_first_moment(), r.v = model.gathered_second_moment();
  r.local = model.layout().size();
  const int D = grid.data_and_context().size();  // the optimizer is sharded over data × context
  r.shard = 0;
  for (const ZeroUnit& u : zero_units(model.layout(), grid.embedding() != nullptr, grid.data_and_context().rank(), D)) {
    r.shard += u.piece;
  }
  for (int i = 0; i < kDeviceUses; ++i) {
    r.device[size_t(i)] = model.device_memory().in_use(DeviceUse(i));
    r.host[size_t(i)] = model.host_memory().in_use(DeviceUse(i));
  }
  return r;
}

// Per llm.c tensor: |a − b| ≤ relative · max |b| (+ floor).
void expect_close(const std::vector<float>& a, const std::vector<float>& b, double relative, double floor,
                  const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  size_t offset = 0;
  for (int64_t size : gpt_tensor_sizes(test_shape())) {
    double scale = 0, worst = 0;
    for (size_t j = offset; j < offset + size_t(size); ++j) {
      scale = std::max(scale, double(std::fabs(b[j])));
      worst = std::max(worst, double(std::fabs(a[j] - b[j])));
    }
    EXPECT_LE(worst, relative * scale + floor) << what << ", llm.c tensor at " << offset;
    offset += size_t(size);
  }
}

struct Case {
  std::string name;
  int64_t pipeline, data, z, y, x;
  bool sequence_parallel = false;
  std::string order = "xyzdp";
  int64_t context = 1;
};

ParallelConfig config_of(const Case& c, int zero, bool offload = false) {
  ParallelConfig config;
  config.pipeline = c.pipeline, config.data = c.data, config.z = c.z, config.y = c.y, config.x = c.x;
  config.microbatch = kMicrobatch, config.sequence_parallel = c.sequence_parallel;
  config.order = parse_order(c.order, "test");
  config.zero = zero, config.offload = offload, config.context = c.context;
  return config;
}

std::vector<Case> cases() {
  return {
      {"data2", 1, 2, 1, 1, 1},
      {"data2_x2", 1, 2, 1, 1, 2},
      {"data2_z2", 1, 2, 2, 1, 1, false, "zxydp"},           // the norms' Z part, then the data shards
      {"pipe2_data2", 2, 2, 1, 1, 1, false, "dpxyz"},        // the tied embedding between the stages
      {"data2_y2_sequence_parallel", 1, 2, 1, 2, 1, true},  // the norms' Y part
      {"data4", 1, 4, 1, 1, 1},
      {"context2", 1, 1, 1, 1, 1, false, "xyzcdp", 2},  // context ranks share the shards as data ranks do
      {"data2_context2", 1, 2, 1, 1, 1, false, "xyzcdp", 2},
  };
}

// zero 2 shards the gradient and zero 1 the state alone; both equal zero 0's training.
TEST(ZeroOptimizerTest, ZeroOneAndTwoTrainAsZeroZero) {
  cpu::set_gemm_threads(1);
  int ran = 0;
  for (const Case& c : cases()) {
    if (c.pipeline * c.data * c.context * c.z * c.y * c.x != world_size()) continue;
    SCOPED_TRACE(c.name);
    const Result plain = train(config_of(c, 0));
    const Result one = train(config_of(c, 1)), two = train(config_of(c, 2));
    EXPECT_EQ(one.losses, two.losses);
    EXPECT_EQ(one.norms, two.norms);
    EXPECT_EQ(one.gradients, two.gradients);
    EXPECT_EQ(one.parameters, two.parameters);
    EXPECT_EQ(one.losses[0], plain.losses[0]);  // the same forward before any step
    const bool same_sums = c.data * c.context == 2 && c.z == 1 && !c.sequence_parallel && c.pipeline == 1;
    if (same_sums) {
      EXPECT_EQ(one.gradients, plain.gradients);
      EXPECT_EQ(one.parameters, plain.parameters);
      EXPECT_EQ(one.m, plain.m);
      EXPECT_EQ(one.v, plain.v);
      EXPECT_EQ(one.losses, plain.losses);
    }
    for (int s = 0; s < kSteps; ++s) {
      EXPECT_NEAR(one.losses[size_t(s)], plain.losses[size_t(s)], 1e-6 * plain.losses[size_t(s)]);
      EXPECT_NEAR(one.norms[size_t(s)], plain.norms[size_t(s)], 1e-6 * plain.norms[size_t(s)]);
    }
    expect_close(one.gradients, plain.gradients, 1e-6, 0, "gradients after step 1");
    // Adam divides a gradient by its own size: a near-zero one's round-off moves its weight by up to ~lr.
    expect_close(one.parameters, plain.parameters, 1e-6, 1e-4 * kLr, "weights after step 2");
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

// The optimizer state is 1/D per rank (the ZeRO formula the memory model
// charges, model/memory_model.cc), on the device or, with offload, the host
// beside the fp32 master shard; offload changes no number.
TEST(ZeroOptimizerTest, TheOptimizerStateIsBookedPerShard) {
  cpu::set_gemm_threads(1);
  const Case c = world_size() == 2 ? Case{"data2", 1, 2, 1, 1, 1} : Case{"pipe2_data2", 2, 2, 1, 1, 1, false, "dpxyz"};
  using U = DeviceUse;
  for (int zero : {1, 2}) {
    SCOPED_TRACE("zero " + std::to_string(zero));
    const Result plain = train(config_of(c, 0)), sharded = train(config_of(c, zero));
    const Result offloaded = train(config_of(c, zero, true), 3);
    const int64_t n = sharded.local, shard = sharded.shard, D = c.data;
    EXPECT_GE(shard * D, n);
    EXPECT_LT(shard * D, n + 8 * D);  // a few units, each padded to D pieces
    EXPECT_EQ(plain.device[size_t(U::optimizer)], 8 * n);
    EXPECT_EQ(sharded.device[size_t(U::optimizer)], 8 * shard);
    EXPECT_EQ(sharded.device[size_t(U::weights)], 4 * n);
    // The backward's accumulation buffer and this rank's shard of the reduced gradient.
    EXPECT_EQ(sharded.device[size_t(U::gradients)], 4 * n + 4 * shard);
    EXPECT_EQ(sharded.host[size_t(U::optimizer)], 0);
    EXPECT_EQ(offloaded.device[size_t(U::optimizer)], 0);
    EXPECT_EQ(offloaded.host[size_t(U::optimizer)], 8 * shard);
    EXPECT_EQ(offloaded.host[size_t(U::weights)], 4 * shard);
    EXPECT_EQ(offloaded.losses, sharded.losses);
    EXPECT_EQ(offloaded.parameters, sharded.parameters);
  }
}

// With one data rank there is nothing to shard: zero 2 is zero 0, bytes included.
TEST(ZeroOptimizerTest, OneDataRankChangesNothing) {
  cpu::set_gemm_threads(1);
  const Case c{"x_over_all", 1, 1, 1, 1, world_size()};
  const Result plain = train(config_of(c, 0)), sharded = train(config_of(c, 2));
  EXPECT_EQ(sharded.losses, plain.losses);
  EXPECT_EQ(sharded.parameters, plain.parameters);
  EXPECT_EQ(sharded.device, plain.device);
}

// A checkpoint's full moments go into the shards and come back whole (resume).
TEST(ZeroOptimizerTest, MomentsLoadIntoTheShardsAndGatherBack) {
  const Case c{"data_over_all", 1, world_size(), 1, 1, 1};
  const Result trained = train(config_of(c, 1));
  MpiCommunicator world(MPI_COMM_WORLD);
  ProcessGrid grid(world, config_of(c, 1));
  ParallelOptions options;
  options.seq = kT;
  ParallelGpt model(test_shape(), grid, options);
  model.load(trained.parameters);
  model.load_moments(trained.m, trained.v);
  EXPECT_EQ(model.gathered_first_moment(), trained.m);
  EXPECT_EQ(model.gathered_second_moment(), trained.v);
  EXPECT_EQ(model.gather(model.parameters().data()), trained.parameters);
}

// Units: every bucket cut in D pieces, the tied embedding a unit of its own.
TEST(ZeroOptimizerTest, UnitsCoverTheLocalBufferAndIsolateTheTiedEmbedding) {
  ParallelConfig config;
  config.pipeline = 2, config.data = 3;
  const PipelineSplit split = split_pipeline(gpt_spec(test_shape(), kT), 2, 1);
  GridCoords last;
  last.pipeline = 1, last.data = 2;
  const ShardLayout layout(test_shape(), config, last, split);
  const std::vector<ZeroUnit> units = zero_units(layout, true, 2, 3);
  int64_t covered = 0, tied = 0;
  for (const ZeroUnit& u : units) {
    EXPECT_EQ(u.offset, covered);
    EXPECT_EQ(u.piece, (u.size + 2) / 3);
    EXPECT_EQ(u.begin, std::min(u.offset + u.size, u.offset + 2 * u.piece));
    EXPECT_LE(u.end, u.offset + u.size);
    covered += u.size;
    if (u.tied) {
      ++tied;
      EXPECT_EQ(u.size, test_shape().padded_vocab * test_shape().channels);  // y = 1: the rule's 128 rows
    }
  }
  EXPECT_EQ(covered, layout.size());
  EXPECT_EQ(tied, 1);
}

}  // namespace
}  // namespace axo
