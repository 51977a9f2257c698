// The token embedding and the LM head with its cross-entropy, vocabulary-
// parallel over Y as Megatron-LM's VocabParallelEmbedding and
// vocab_parallel_cross_entropy run them (Shoeybi et al. 2019, §3), by the
// rule of model/vocab_parallel.h: Y rank j holds the rows [j·V'/y,
// (j+1)·V'/y) of the (tied) token embedding, V' the vocabulary padded to a
// multiple of 128·y; rows at or past the model's V are padding and take no
// part in the loss. Shapes, for m tokens of one microbatch (every Y rank
// sees all m: with sequence parallelism the rank's mr = m/y rows are
// gathered), Cx = C/x, R = V'/y:
//   embedding: out[m, Cx] = Σ over Y of (wte[t − j·R] if this rank holds t,
//     else 0) — one rank adds a non-zero row, so the sum is exact; summed by
//     an all-reduce over Y (or, with sequence parallelism, a reduce-scatter
//     that leaves each rank its mr rows);
//   logits[m, R] = Σ over X of lnf[m, Cx] · wte[R, Cx]ᵀ;
//   loss: per token the maximum logit (all-gathered over Y, y·m floats),
//     then Σ exp(logit − max) and the target's logit − max (from the rank
//     holding the target, zero elsewhere) summed over Y (3·m floats: the sum
//     goes as a float and its remainder, keeping a double's precision):
//     loss = log Σ exp − (target − max); probs = exp(logit − max) / Σ exp;
//   backward: dlogits = scale · (probs − onehot(target)); dlnf[m, Cx] =
//     dlogits · wte summed over Y (all-reduce; with sequence parallelism a
//     reduce-scatter to the mr rows); dwte[R, Cx] += dlogitsᵀ · lnf.
// The embedding's backward adds d.input's rows (gathered over Y with
// sequence parallelism) to the rows of the tokens this rank holds. So wte's
// gradient is partial over z and data only, whatever the Y layout.
#pragma once

#include <cstdint>

#include "executor/memory/device_memory.h"
#include "executor/parallel/context_chunks.h"
#include "executor/parallel/phase_times.h"
#include "executor/parallel/process_grid.h"
#include "executor/parallel/shard_view.h"
#include "executor/gpt/gpt.h"
#include "model/vocab_parallel.h"

namespace axo {

// This Y rank's vocabulary slice of `shape` under `config` (the model's rule).
VocabSlice executor_vocab_slice(const GptShape& shape, const ParallelConfig& config, int64_t y_rank);

class VocabParallelHead {
 public:
  // Scratch ([m, Cx] with sequence parallelism) is booked in `memory` as activations.
  // wte and wpe are fp32 or 2-byte views (shard_view.h); in bf16 or fp16 the GEMMs take 2-byte operands at
  // `precision`, the embedding widens its rows, and gradients are added into the 2-byte storage rounded.
  VocabParallelHead(const GptShape& shape, const ProcessGrid& grid, PhaseTimes& times, DeviceMemory& memory,
                    Precision precision = Precision::fp32);

  int64_t rows() const { return slice_.rows(); }  // R = V'/y

  // out[mr, Cx] = the embedding of this rank's rows [first_row, first_row + mr) of the m, each
  // sequence's rows at the global positions `chunks` gives them; tokens: all m of the microbatch on this Z rank.
  void embed(float* out, const int* tokens, ShardView wte, ShardView wpe, int64_t m, int64_t first_row,
             const ContextChunks& chunks);
  void embed_backward(ShardGrad dwte, ShardGrad dwpe, const float* dout, const int* tokens, int64_t m, int64_t first_row,
                      const ContextChunks& chunks);
  // logits[m, R] from lnf_rows[m, Cx] (gathered from lnf[mr, Cx] with sequence parallelism).
  void logits(float* logits, float* lnf_rows, const float* lnf, ShardView wte, int64_t m);
  // probs[m, R] and the sum of the losses of rows [first_row, first_row + count).
  double cross_entropy(float* probs, const float* logits, const int* targets, int64_t m, int64_t first_row,
                       int64_t count);
  // dlogits[m, R] (overwritten), dwte += dlogitsᵀ·lnf_rows, dlnf[mr, Cx] (dlnf_rows[m, Cx] is scratch).
  void backward(float* dlnf, float* dlnf_rows, float* dlogits, ShardGrad dwte, const float* probs, const int* targets,
                const float* lnf_rows, ShardView wte, int64_t m, double scale);

 private:
  float* scratch(int64_t elements);
  const ProcessGrid& grid_;
  PhaseTimes& times_;
  VocabSlice slice_;
  int64_t Cx_, V_;
  bool sequence_parallel_;
  Precision precision_;
  DeviceFloats scratch_;
};

}  // namespace axo
