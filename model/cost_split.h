// The pipeline split of stage_partition.h, remembered: the cost and memory
// models ask for it on every configuration they price, and computing it
// searches over the layer counts. Safe to call from several threads.
#pragma once

#include <cstdint>
#include <vector>

#include "model/stage_partition.h"

namespace axo {

// A split and the layers of each of its stages (over all their chunks).
struct RememberedSplit {
  PipelineSplit split;
  std::vector<int64_t> stage_layers;
};

// split_pipeline(spec, stages, interleave), computed once per distinct input
// (the layers, sequence, widths and vocabulary it weighs, and the two sizes).
// The reference stays valid for the life of the program. Throws what
// split_pipeline throws.
const RememberedSplit& remembered_split(const TransformerSpec& spec, int64_t stages, int64_t interleave);

// Layers per stage of `split`.
std::vector<int64_t> layers_by_stage(const PipelineSplit& split);

}  // namespace axo
