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
//     of the local gradient buffer under zero 1, adds it into its gradient
//     shard under zero 2 (below; in the storage format: rounded to bf16 in
//     mixed precision, as zero 0 stores its reduced buckets); the tied
//     embedding's pieces are then summed between the first and last stage;
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
// Zero 1 reduces once, after backward: the backward accumulates every
// microbatch's gradient into the whole local buffer (GptStage), start_bucket
// starts a bucket's units once its last microbatch is done, and the reduced
// pieces are stored inside that buffer: e bytes of gradient per local
// parameter, what the memory model charges for zero 1. With D = 2 and no Z
// or Y part a reduce-scatter adds the same two numbers as the all-reduce of
// zero 0, so its weights equal zero 0's, in fp32 and in bf16.
//
// Zero 2 (§5.2) reduces after every microbatch: there is no local gradient
// buffer, only the buckets the backward is filling (bucket_gradients.h).
// Once a microbatch's backward of a layer is done (Linear4d's reduce-scatter
// over Z finished with it: GptStage::on_microbatch_gradients),
// reduce_microbatch copies each unit of the layer's buckets into fp32, sums
// its Z or Y part (blocking: that group's ranks run this stage's backwards
// in one order), reduce-scatters them over data × context, and adds the
// pieces into the gradient shard; the bucket is given back. The shard
// is in the weights' storage format (e bytes per shard element: the model's
// e·n/D of gradients, model/memory_model.cc; a 2-byte shard rounds each
// microbatch's sum), beside the fp32 copies of the reduce-scatters in flight
// (communication buffers). Every replica runs a stage's backwards in one
// order (microbatch after microbatch within a chunk, layers from the top;
// interleaved chunks in 1F1B's fixed order, or under the message-driven
// schedule in the order the stage's first rank chose: pipeline_schedule.h),
// so each layer's reduce-scatter meets the same one on every replica and is
// waited for at once: one bucket's fp32 copies in flight (left to arrive, a
// step's copies piled up to 5x the whole model's gradients in the demo). The
// sums run in another order than zero 0's and 1's: equal to 1e-6 in fp32, to
// the format's round-off in bf16 and fp16.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "executor/comm/communicator.h"
#include "executor/memory/device_memory.h"
#include "executor/parallel/activation_stash.h"
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
  // shards are booked in `device` (or `host` with offload). Under zero 2
  // there is no local gradient buffer (`gradients` is unused): the reduced
  // gradients accumulate in a shard of their own, in the weights' format.
  ZeroOptimizer(const ShardLayout& layout, const ShardLayout& replica_owner_layout, const ProcessGrid& grid,
                ShardGrad parameters, ShardGrad gradients, DeviceMemory& device, DeviceMemory& host,
                PhaseTimes& times, int threads);

  int64_t shard_size() const { return shard_size_; }
  const std::vector<ZeroUnit>& units() const { return units_; }

  // Before a step's backward: the zero 2 gradient shard back to zeros.
  void start_step();
  // Zero 1, backward: bucket `bucket`'s gradients are final; starts its units' reductions.
  void start_bucket(size_t bucket);
  // Zero 2, backward: one microbatch's gradients of bucket `bucket` (its buffer,
  // bucket_gradients.h) reduce-scattered in fp32 and added into the shard (the
  // bucket's buffer may be released on return).
  void reduce_microbatch(size_t bucket, ShardGrad gradients);
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
  // A new pending reduction of unit `unit`: its gradients at `offset` of `source` in fp32, padded
  // to D pieces; `may_alias`: the fp32 source itself when it needs no padding, else always a copy.
  Pending& stage_unit(size_t unit, ShardGrad source, int64_t offset, bool may_alias);
  void start_reduce_scatter(Pending& pending, Communicator& group);
  void finish_shard();
  // Zero 2: a completed reduce-scatter's piece added into the shard.
  void add_to_shard(const Pending& pending);
  // Where unit u's reduced piece lies in reduced_: the shard under zero 2, else the local buffer.
  int64_t piece_offset(const ZeroUnit& u) const { return per_microbatch_ ? u.shard_offset : u.begin; }
  // This rank's pieces of the local fp32 gradients (a copy in bf16), for the optimizer.
  const float* piece_gradients(const ZeroUnit& u, DeviceFloats& window) const;
  std::vector<float> gather_local(const float* shard) const;
  void all_gather_weights();

  const ShardLayout& layout_;
  const ShardLayout& owner_layout_;  // the same layout as data rank 0 holds it: whose copies count in norms
  const ProcessGrid& grid_;
  ShardGrad parameters_, gradients_;  // the local buffers in their storage format
  bool per_microbatch_;               // zero 2: each microbatch reduce-scattered into the shard
  ShardGrad reduced_;                 // where the reduced pieces are: gradients_, or the shard under zero 2
  DeviceFloats shard_f32_;            // zero 2: the gradient shard (shard_size_ elements) in fp32,
  DeviceHalves shard_half_;           // or in the 2-byte format
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
