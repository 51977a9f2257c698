// Which transformer layers each pipeline stage runs: the one partition rule
// that the cost model, the memory model and the executor all use, so the
// stage the planner prices is the stage that runs.
//
// A pipeline of p stages with v chunks per stage (interleaving, "virtual
// stages") cuts the layers into p·v contiguous chunks. Chunk k = c·p + s is
// stage s's c-th chunk, so layers flow through stages 0, 1, …, p−1, then
// back to stage 0 for the next chunk (Narayanan et al. SC'21 §2.2). The
// embedding sits in chunk 0 (stage 0), the final norm, LM head and loss in
// chunk p·v − 1 (stage p − 1).
//
// The split minimises the largest chunk's forward FLOPs per sequence, the
// weights being (2 FLOPs per multiply-add):
//   layer = 2·s·(linear weights of a block) + 4·s²·h   (GEMMs, QKᵀ and AV)
//   head  = 2·s·h·V                                     (LM head)
//   embedding = 0                                       (a lookup)
// For GPT this is Narayanan et al. SC'21 eq. 2 per layer: 24·s·h² + 4·s²·h.
// Among the best splits it takes layers away from the costliest chunks
// (later chunks first on ties), so equal chunks stay equal when the layers
// divide.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/transformer_spec.h"

namespace axo {

struct LayerRange {
  int64_t begin = 0, end = 0;  // layers [begin, end)
  int64_t count() const { return end - begin; }
  bool operator==(const LayerRange&) const = default;
};

class PipelineSplit {
 public:
  PipelineSplit(std::vector<LayerRange> chunks, int64_t stages);

  int64_t stages() const { return stages_; }
  int64_t interleave() const { return int64_t(chunks_.size()) / stages_; }
  // All chunks in layer order (chunk k = c·stages + s).
  const std::vector<LayerRange>& chunks() const { return chunks_; }
  // Stage `stage`'s chunk number `c` (0 ≤ c < interleave).
  const LayerRange& chunk(int64_t stage, int64_t c) const { return chunks_[size_t(c * stages_ + stage)]; }
  // Layers stage `stage` holds over all its chunks.
  int64_t stage_layers(int64_t stage) const;
  // The most layers any stage holds (it sets memory).
  int64_t max_stage_layers() const;
  // The most layers any chunk holds.
  int64_t max_chunk_layers() const;
  // Of stage `stage`'s layers, those among the first `per_chunk` of each of its chunks.
  int64_t leading_layers(int64_t stage, int64_t per_chunk) const;
  // Layer counts by stage, chunks joined by '+': "8,4" or "2+2,2+1".
  std::string text() const;

 private:
  std::vector<LayerRange> chunks_;
  int64_t stages_;
};

// Splits `layers` equal layers of cost `layer_cost` into `chunks` contiguous
// chunks, `first_extra` added to chunk 0 and `last_extra` to the last one,
// minimising the largest chunk cost. InputError when there are fewer layers
// than chunks.
std::vector<LayerRange> partition_layers(int64_t layers, double layer_cost, double first_extra, double last_extra,
                                         int64_t chunks);

// The weights above for `spec`: a layer's and the LM head's forward FLOPs per sequence.
struct SplitWeights {
  double layer = 0, head = 0;
};
SplitWeights split_weights(const TransformerSpec& spec);
// Empty, or why full recompute of the first `recompute_layers` layers of each chunk of `split` names
// more layers than its largest chunk holds (0, every layer, always applies): refused rather than
// taken as every layer, so an export never asks a framework for more layers than a chunk has.
std::string recompute_layers_problem(const PipelineSplit& split, int64_t recompute_layers);

// The model's split over `stages` stages of `interleave` chunks each, by the
// weights above. InputError (naming the user's values) when a chunk would
// have no layer.
PipelineSplit split_pipeline(const TransformerSpec& spec, int64_t stages, int64_t interleave);

}  // namespace axo
