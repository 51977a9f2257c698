// The LM head's vocabulary rule: which ranks compute which slice of the
// logits and the cross-entropy. The cost model and the memory model charge
// by it; the executor computes by it (executor/parallel/vocab_parallel_head.h).
//
// Vocabulary-parallel over Y, as Megatron-LM's VocabParallelEmbedding and
// vocab_parallel_cross_entropy do (Shoeybi et al. 2019, §3): the vocabulary
// is padded to V' = ⌈V / (128·y)⌉ · 128·y, and Y rank j holds the head's rows
// [j·V'/y, (j+1)·V'/y) (and the tied embedding's). It computes those logits
// for its T = b·s/z tokens, its hidden columns' partial sums all-reduced over
// X, and its part of the loss: the row maximum and the sum of exponentials
// over its slice, all-reduced over Y (two fp32 numbers per token), so no rank
// ever holds all V' logits. Padding rows (ids ≥ V) take no part in the loss.
#pragma once

#include <cstdint>

#include "model/transformer_spec.h"

namespace axo {

// Vocabulary padded to a multiple of 128·y.
int64_t padded_vocab(const TransformerSpec& spec, int64_t y);

// The vocabulary rows one Y rank computes in the LM head and the loss.
struct VocabSlice {
  int64_t begin = 0, end = 0;  // rows [begin, end) of the padded vocabulary
  int64_t real_end = 0;        // min(end, V): rows from here on are padding
  int64_t rows() const { return end - begin; }
  int64_t real_rows() const { return real_end > begin ? real_end - begin : 0; }
  bool operator==(const VocabSlice&) const = default;
};

// Y rank `y_rank` of `y`: V'/y rows. Every X and Z rank of that Y rank
// computes the same rows (over its own hidden columns and tokens).
VocabSlice head_vocab_slice(const TransformerSpec& spec, int64_t y, int64_t y_rank);

}  // namespace axo
