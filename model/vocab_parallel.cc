// The LM head's vocabulary split (see vocab_parallel.h).
#include "model/vocab_parallel.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace axo {

int64_t padded_vocab(const TransformerSpec& spec, int64_t y) {
  const int64_t multiple = 128 * y;
  return (spec.vocab + multiple - 1) / multiple * multiple;
}

VocabSlice head_vocab_slice(const TransformerSpec& spec, int64_t y, int64_t y_rank) {
  if (y < 1 || y_rank < 0 || y_rank >= y) {
    throw std::out_of_range("Y rank " + std::to_string(y_rank) + " is not in a Y group of " + std::to_string(y));
  }
  const int64_t rows = padded_vocab(spec, y) / y;
  VocabSlice slice;
  slice.begin = y_rank * rows;
  slice.end = slice.begin + rows;
  slice.real_end = std::min(slice.end, spec.vocab);
  return slice;
}

}  // namespace axo
