// The sharded optimizer over the data ranks (ZeRO stages 1 and 2,
// Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training
// Trillion Parameter Models", §5.1–5.2; Megatron-LM's distributed optimizer).
//
// The D ranks of a data group hold the same local layout (shard_layout.h).
// Each gradient bucket is a "unit" here (a bucket holding the tied embedding
// is split so the embedding is a unit of its own, the same on the first and
// the last stage), cut in D pieces of ⌈size/D⌉ elements: data rank d owns
// piece d of every unit. After backward:
//   gradients: reduce-scattered over the data group in fp32 (a unit summed
//     over Z or Y as well is first all-reduced over that part), so rank d
//     receives the summed piece d into its gradient shard; the tied
//     embedding's pieces are then summed between the first and last stage;
//   clipping: the norm sums each owned element once, over the shards;
//   AdamW: rank d updates its pieces of the weights with its shard of the
//     Adam moments (and, with offload, of the fp32 master weights, on the
//     host), then the pieces are all-gathered over the data group.
// Stage 1 shards the optimizer state; stage 2 shards the reduced gradient
// as well: a rank keeps only its shard of the summed gradient (the
// backward's accumulation buffer, which GptStage writes layer by layer, is
// still whole). Both run the same operations, so their weights are equal
// bit for bit; with D = 2 and no Z or Y part a reduce-scatter adds the same
// two numbers as the all-reduce of zero 0, so they equal zero 0's as well.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "executor/comm/communicator.h"
#include "executor/memory/device_memory.h"
#include "executor/parallel/phase_times.h"
#include "executor/parallel/process_grid.h"
#include "executor/parallel/shard_layout.h"

namespace axo {

// A run of the local buffer reduced as one, and this rank's piece of it.
struct ZeroUnit {
  int64_t offset = 0, size = 0;  // in the local buffer
  int64_t piece = 0;             // ⌈size / D⌉: elements per data rank
  int64_t shard_offset = 0;      // where this rank's piece sits in the shard
  size_t bucket = 0;             // the gradient bucket it belongs to
  GradientGroup group = GradientGroup::data;
  bool tied = false;  // the tied embedding, summed between the first and last stage
  // This rank's elements of the unit: [begin, end) of the local buffer (possibly empty).
  int64_t begin = 0, end = 0;
};

// The units of `layout` for data rank `d` of `D` (their shard offsets packed).
std::vector<ZeroUnit> zero_units(const ShardLayout& layout, bool tied_embedding, int d, int D);

class ZeroOptimizer {
 public:
  // `gradients` and `parameters` are the rank's local buffers (layout.size()
  // elements); the shards are booked in `device` (or `host` with offload).
  ZeroOptimizer(const ShardLayout& layout, const ShardLayout& replica_owner_layout, const ProcessGrid& grid,
                float* parameters, float* gradients, DeviceMemory& device, DeviceMemory& host, PhaseTimes& times,
                int threads);

  int64_t shard_size() const { return shard_size_; }
  const std::vector<ZeroUnit>& units() const { return units_; }

  // Backward: bucket `bucket`'s gradients are final; starts its units' reductions.
  void start_bucket(size_t bucket);
  // After backward: completes the reductions (and the tied embedding's sum).
  void finish_reduction();
  // The global gradient norm over the shards; scales them to max_norm when above it (0: never).
  double clip_gradients(double max_norm);
  // AdamW step `step` (1-based) on this rank's pieces, then the all-gather of the weights.
  void adamw(long step, double lr, double weight_decay);

  // The fp32 master shard from the local weights (offload: it lives on the host).
  void load_master();
  // Local-layout moments ↔ the shards (the whole local arrays, on every data rank).
  void load_moments(const float* local_m, const float* local_v);
  std::vector<float> local_first_moment() const { return gather_local(m_.data()); }
  std::vector<float> local_second_moment() const { return gather_local(v_.data()); }
  // The reduced gradient in the local layout (every data rank's pieces).
  std::vector<float> local_gradients() const { return gather_local(gradients_.data()); }

 private:
  struct Pending {
    size_t unit;
    RequestPtr request;
    bool scatter_next;  // the Z/Y part's all-reduce is in flight; the reduce-scatter follows
    DeviceFloats staging;
  };
  Communicator* other_part(GradientGroup group) const;
  void start_reduce_scatter(Pending& pending);
  std::vector<float> gather_local(const float* shard) const;
  void all_gather_weights();

  const ShardLayout& layout_;
  const ShardLayout& owner_layout_;  // the same layout as data rank 0 holds it: whose copies count in norms
  const ProcessGrid& grid_;
  float* parameters_;
  float* gradients_local_;
  DeviceMemory& device_;
  PhaseTimes& times_;
  int threads_;
  bool offload_;
  std::vector<ZeroUnit> units_;
  int64_t shard_size_ = 0;
  DeviceFloats gradients_, m_, v_, master_;  // shards; master_ only with offload
  std::vector<Pending> pending_;
};

}  // namespace axo
