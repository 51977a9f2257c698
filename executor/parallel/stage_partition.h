// Which transformer layers each pipeline stage runs: contiguous ranges that
// minimise the slowest stage's cost, the embedding charged to the first
// stage and the LM head with the loss to the last.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/gpt/gpt.h"

namespace axo {

struct LayerRange {
  int64_t begin = 0, end = 0;  // layers [begin, end)
  int64_t count() const { return end - begin; }
};

// Stages of at least one layer each for `layer_costs` (one per layer), with
// `first_extra` added to stage 0 and `last_extra` to the last stage; the
// split minimises the largest stage cost (exact dynamic programme over split
// points). InputError if there are fewer layers than stages.
std::vector<LayerRange> partition_layers(const std::vector<double>& layer_costs, double first_extra,
                                         double last_extra, int64_t stages);

// The GPT's stages for sequences of T: forward FLOPs per sequence, a layer
// 24·T·C² + 4·T²·C (GEMMs and causal attention, Narayanan et al. SC'21 eq. 2
// per layer), the head 2·T·C·Vp, the embedding nothing.
std::vector<LayerRange> partition_gpt(const GptShape& shape, int64_t T, int64_t stages);

}  // namespace axo
