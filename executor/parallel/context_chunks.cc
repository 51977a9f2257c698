// A context rank's chunks of each sequence (see context_chunks.h).
#include "executor/parallel/context_chunks.h"

#include <algorithm>
#include <string>

#include "model/error.h"

namespace axo {

ContextChunks::ContextChunks(int64_t context, int64_t rank, int64_t T) : context_(context), rank_(rank), T_(T) {
  if (context > 1 && T % (2 * context) != 0) {
    throw InputError("context parallelism: 2 × context = " + std::to_string(2 * context) +
                     " does not divide the sequence of " + std::to_string(T) +
                     " tokens (each rank holds 2 of 2·context equal chunks)");
  }
  chunk_ = context > 1 ? T / (2 * context) : T;
}

std::vector<int> ContextChunks::select(const int* all, int64_t sequences) const {
  const int64_t Tl = local_length();
  std::vector<int> mine(size_t(sequences * Tl));
  for (int64_t s = 0; s < sequences; ++s) {
    for (int64_t h = 0; h < halves(); ++h) {
      const int* chunk = all + s * T_ + chunk_of(rank_, h) * chunk_;
      std::copy_n(chunk, chunk_, mine.begin() + s * Tl + h * chunk_);
    }
  }
  return mine;
}

void ContextChunks::for_each_run(int64_t first_row, int64_t rows,
                                 const std::function<void(int64_t, int64_t, int64_t)>& run) const {
  for (int64_t row = first_row; row < first_row + rows;) {
    const int64_t j = row % local_length();
    // The run ends with the chunk or with the rows asked for.
    const int64_t count = std::min(chunk_ - j % chunk_, first_row + rows - row);
    run(row, count, position(j));
    row += count;
  }
}

}  // namespace axo
