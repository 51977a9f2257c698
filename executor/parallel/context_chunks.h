// Which tokens of each sequence a context rank holds: the causal load
// balance of context parallelism. A sequence of T tokens is cut in 2·c
// chunks of Tc = T/(2c); context rank r holds chunks r and 2c−1−r, in that
// order, so that under the causal mask every rank has the same attention
// work (Megatron-LM megatron/core/utils.py get_batch_on_this_cp_rank; the
// cost model prices it so, model/cost_context.h). With c = 1 the rank holds
// the whole sequence as one chunk.
//
// A rank's rows of a microbatch are its Tl = T/c tokens of each sequence in
// turn, [sequences, Tl]; local index j of a sequence is at global position
// position(j). Embeddings and the causal mask use the global positions.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace axo {

class ContextChunks {
 public:
  ContextChunks() = default;
  // InputError when c > 1 and 2·c does not divide T (naming both).
  ContextChunks(int64_t context, int64_t rank, int64_t T);

  int64_t context() const { return context_; }
  int64_t sequence_length() const { return T_; }     // T
  int64_t chunk_length() const { return chunk_; }     // Tc (T with c = 1)
  int64_t halves() const { return context_ > 1 ? 2 : 1; }
  int64_t local_length() const { return halves() * chunk_; }  // Tl = T/c
  // The global chunk index of local half h of context rank `rank`'s tokens.
  int64_t chunk_of(int64_t rank, int64_t half) const { return half == 0 ? rank : 2 * context_ - 1 - rank; }
  // The global position of this rank's local index j ∈ [0, Tl) of a sequence.
  int64_t position(int64_t j) const { return chunk_of(rank_, j / chunk_) * chunk_ + j % chunk_; }

  // This rank's tokens of a [sequences, T] batch, [sequences, Tl].
  std::vector<int> select(const int* all, int64_t sequences) const;
  // For local rows [first_row, first_row + rows) of a [·, Tl] batch, each run
  // of consecutive global positions: run(row, count, first_position).
  void for_each_run(int64_t first_row, int64_t rows,
                    const std::function<void(int64_t row, int64_t count, int64_t position)>& run) const;

 private:
  int64_t context_ = 1, rank_ = 0, T_ = 0, chunk_ = 0;
};

}  // namespace axo
