// Which elements of the GPT's parameters a rank of the 4D grid holds, where
// they sit in its local buffer, and where in llm.c's full layout (gpt.h).
//
// A rank of stage s holds the layers of its chunks (stage_partition.h: with
// interleave v, the model's chunks s, s + P, …, s + (v−1)·P, in that order in
// the local buffer), plus the embedding (wte, wpe) on the first stage and
// the final LayerNorm and a copy of the tied wte on the last. With C channels, NH heads, Cx = C/Gx and Cy = C/Gy:
//   linear weights W[n,k]: the (n/Gout)×(k/Gin) block of this (x, y),
//     flattened row-major and split in Gz contiguous chunks (the last padded
//     with zeros); plain layers (qkv, fc) have Gin = X, Gout = Y, transposed
//     ones (attproj, fcproj) Gin = Y, Gout = X. The qkv block's rows are the
//     q, k and v rows of this Y rank's NH/Gy heads, so attention runs on
//     whole heads.
//   qkvb, fcb: the Y slice matching the block's rows; LayerNorm weights and
//     biases, attprojb, fcprojb, lnf: the X slice [x·Cx, (x+1)·Cx).
//   wte [V'/Gy, Cx]: this Y rank's vocabulary rows (model/vocab_parallel.h's
//     rule; rows past llm.c's Vp are padding), this X rank's columns;
//   wpe [maxT, Cx]: every row, this X rank's columns.
// Linear shards are unique per (x, y, z) and replicated over data; qkvb and
// fcb are replicated over x, z and data; wte over z and data; the rest over
// y, z and data. A parameter's gradient is summed over the ranks holding
// partial sums of it: linear shards over data (their Z partial sums are
// reduce-scattered inside the layer), the rest over z and data, and the
// tied wte also between the first and the last stage. With sequence
// parallelism (x = 1) the norms and wpe work on this rank's rows of the
// sequence, so their gradients are summed over y as well (over y, z and
// data: they stay whole on every Z rank, which holds other sequences).
// Context ranks hold the same shards as data ranks do and compute on other
// tokens of the sequence, so every "over data" above is over data × context
// (the groups of process_grid.h), and context rank 0 owns the copy.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/gpt/gpt.h"
#include "executor/parallel/process_grid.h"
#include "model/stage_partition.h"

namespace axo {

// llm.c's sixteen tensors, in gpt_tensor_sizes' order.
enum class GptTensor { wte, wpe, ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb };

// The ranks a gradient is summed over after backward.
enum class GradientGroup { data, z_and_data, y_z_and_data };

// A run of elements: local[local, local+length) ↔ full[global, global+length).
struct ShardSegment {
  int64_t local = 0, global = 0, length = 0;
};

struct LocalTensor {
  GptTensor kind = GptTensor::wte;
  int64_t layer = -1;   // global layer index; -1 for wte, wpe, lnf
  int64_t offset = 0;   // in the local buffer
  int64_t size = 0;     // elements, padding included
  bool decayed = false;  // AdamW weight decay (matrices)
  bool owned = false;    // the one copy counted in norms and gathers
  bool tied = false;     // wte: also summed between the first and last stage
  GradientGroup group = GradientGroup::z_and_data;
  std::vector<ShardSegment> segments;
};

// A contiguous run of the local buffer whose gradients are final together
// and summed over the same group: the data-parallel all-reduce bucket.
struct GradientBucket {
  int64_t offset = 0, size = 0;
  GradientGroup group = GradientGroup::z_and_data;
  int64_t layer = -1;  // the layer, or -1 before the layers (embedding), or `end` after (head)
};

class ShardLayout {
 public:
  // InputError naming what does not divide what (heads by Gy, channels by
  // Gx); `split` must have the config's pipeline and interleave.
  ShardLayout(const GptShape& shape, const ParallelConfig& config, const GridCoords& coords,
              const PipelineSplit& split);

  const GptShape& shape() const { return shape_; }
  // This rank's chunks of layers, chunk c being the model's chunk c·P + s.
  const std::vector<LayerRange>& chunks() const { return chunks_; }
  int64_t size() const { return size_; }
  const std::vector<LocalTensor>& tensors() const { return tensors_; }
  const std::vector<GradientBucket>& buckets() const { return buckets_; }
  // The tensor `kind` of `layer` (-1 for wte, wpe, lnf); nullptr if this rank holds none.
  const LocalTensor* find(GptTensor kind, int64_t layer = -1) const;
  float* view(float* base, GptTensor kind, int64_t layer = -1) const;
  const float* view(const float* base, GptTensor kind, int64_t layer = -1) const;

  // local ← this rank's elements of full (padding left untouched).
  void scatter(const float* full, float* local) const;
  // full += this rank's owned elements; summed over the world, every element once.
  void add_owned(const float* local, float* full) const;

 private:
  // Buckets: runs of tensors of one layer (or the head) and one group.
  void make_buckets(bool first);
  void add(GptTensor kind, int64_t layer, int64_t size, bool decayed, bool owned, bool tied, GradientGroup group,
           std::vector<ShardSegment> segments);
  GptShape shape_;
  std::vector<LayerRange> chunks_;
  int64_t size_ = 0;
  std::vector<LocalTensor> tensors_;
  std::vector<GradientBucket> buckets_;
};

}  // namespace axo
