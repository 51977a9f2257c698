// The sharded optimizer over the data ranks (ZeRO stages 1 and 2,
// Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training
// Trillion Parameter Models", §5.1–5.2; Megatron-LM's distributed optimizer).
//
// The D ranks of a data group hold the same local layout (shard_layout.h).
// Each gradient bucket is a "unit" here (a bucket holding the tied embedding
// is split so the embedding is a unit of its own, the same on the first and
// the last stage), cut in D pieces of ⌈size/D⌉ elements: data rank d owns
// piece d of every unit, elements [begin, end) of the local buffers.
// After backward:
//   gradients: reduce-scattered over the data group in fp32 (a unit summed
//     over Z or Y as well is first all-reduced over that part, in fp32), so
//     rank d receives the summed piece d and stores it into its own elements
//     of the local gradient buffer (in the storage format: rounded to bf16
//     in mixed precision, as zero 0 stores its reduced buckets); the tied
//     embedding's pieces are summed between the first and last stage first;
//   clipping: the norm sums each owned element once, over the pieces;
//   AdamW: rank d updates the fp32 master weights of its pieces with its
//     shard of the Adam moments, writes them into its pieces of the stored
//     weights (rounded to bf16 in mixed precision), and the pieces are
//     all-gathered over the data group in the storage format.
// The masters: the fp32 weights themselves in fp32 without offload; else a
// shard of their own, on the device in bf16 (optimizer state: 12 bytes per
// parameter with the moments, the memory model's mixed-precision figure),
// on the host with offload.
//
// Stages 1 and 2 run the same operations: the backward accumulates every
// microbatch's gradient into the whole local buffer (GptStage), so the
// gradient is e bytes per local parameter under both and the reduced
// pieces live inside it; the weights under zero 1 and 2 are equal bit for
// bit. With D = 2 and no Z or Y part a reduce-scatter adds the same two
// numbers as the all-reduce of zero 0, so they equal zero 0's as well, in
// fp32 and in bf16.
//
// Zero 1 books what the memory model charges (e·n of gradients, the
// optimizer state over D). Zero 2 does not yet: the model charges e·n/D of
// gradients (ZeRO's 2 + 14/N, model/memory_model.cc) and a reduce-scatter
// after every microbatch (model/cost_data_parallel.cc), which needs a
// backward that hands each microbatch's bucket over and frees it:
// per-microbatch gradient views in StageParameters, Linear4d's
// reduce-scatter over Z finished each microbatch, and the data group's
// collectives issued in one order on every replica (the message-driven
// schedule may run two chunks' backwards in different orders on two
// replicas).
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
#include "executor/parallel/shard_view.h"

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
  // `parameters` and `gradients` are the rank's local buffers (layout.size()
  // elements, both fp32 or both in one 2-byte format: ShardGrad is a writable view); the
  // shards are booked in `device` (or `host` with offload).
  ZeroOptimizer(const ShardLayout& layout, const ShardLayout& replica_owner_layout, const ProcessGrid& grid,
                ShardGrad parameters, ShardGrad gradients, DeviceMemory& device, DeviceMemory& host,
                PhaseTimes& times, int threads);

  int64_t shard_size() const { return shard_size_; }
  const std::vector<ZeroUnit>& units() const { return units_; }

  // Backward: bucket `bucket`'s gradients are final; starts its units' reductions.
  void start_bucket(size_t bucket);
  // After backward: completes the reductions (and the tied embedding's sum).
  void finish_reduction();
  // Loss scaling: whether this rank's reduced pieces hold an inf or a NaN
  // (the caller reduces the flag over the world), and their scaling by `factor`.
  bool pieces_overflow() const;
  void scale_pieces(float factor);
  // Testing only: one of this rank's reduced gradients (if it owns any) becomes +inf.
  void inject_overflow();
  // The global gradient norm over the pieces; scales them to max_norm when above it (0: never).
  double clip_gradients(double max_norm);
  // AdamW step `step` (1-based) on this rank's pieces, then the all-gather of the weights.
  void adamw(long step, double lr, double weight_decay);

  // The fp32 master shard from the local fp32 weights (layout.size() elements).
  void load_master(const float* local_weights);
  // Local-layout moments ↔ the shards (the whole local arrays, on every data rank).
  void load_moments(const float* local_m, const float* local_v);
  std::vector<float> local_first_moment() const { return gather_local(m_.data()); }
  std::vector<float> local_second_moment() const { return gather_local(v_.data()); }
  // The fp32 weights AdamW updates, in the local layout (collective over the data group).
  std::vector<float> local_master_weights() const;
  // The reduced gradient in the local layout (every data rank's pieces; collective).
  std::vector<float> local_gradients() const;

 private:
  struct Pending {
    size_t unit;
    RequestPtr request;
    bool scatter_next;   // the Z/Y part's all-reduce is in flight; the reduce-scatter follows
    DeviceFloats send;     // the unit in fp32 padded to D pieces (unless it is the fp32 buffer itself)
    DeviceFloats received;  // this rank's summed piece in fp32
    float* source;          // what the reductions read: send, or the fp32 buffer itself
  };
  Communicator* other_part(GradientGroup group) const;
  void stage_unit(Pending& pending);
  void start_reduce_scatter(Pending& pending);
  // This rank's pieces of the local fp32 gradients (a copy in bf16), for the optimizer.
  const float* piece_gradients(const ZeroUnit& u, DeviceFloats& window) const;
  std::vector<float> gather_local(const float* shard) const;
  void all_gather_weights();

  const ShardLayout& layout_;
  const ShardLayout& owner_layout_;  // the same layout as data rank 0 holds it: whose copies count in norms
  const ProcessGrid& grid_;
  ShardGrad parameters_, gradients_;  // the local buffers in their storage format
  DeviceMemory& device_, &host_;
  PhaseTimes& times_;
  int threads_;
  bool offload_;
  std::vector<ZeroUnit> units_;
  int64_t shard_size_ = 0;
  float piece_factor_ = 1;  // 2-byte pieces: the unscale and clip factors not yet applied (scale_pieces)
  DeviceFloats m_, v_, master_;  // shards; master_ with offload or 2-byte storage
  std::vector<Pending> pending_;
};

}  // namespace axo
