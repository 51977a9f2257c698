// Activations kept for backward, in fp32 or bf16 (see activation_stash.h).
#include "executor/parallel/activation_stash.h"

#include <algorithm>
#include <stdexcept>

namespace axo {

float* ActivationStash::hold(size_t n) {
  bf16_.clear();
  fp32_.resize(n);
  return fp32_.data();
}

void ActivationStash::keep(const float* values, size_t n, Precision precision) {
  if (precision == Precision::fp32) {
    float* kept = hold(n);
    if (values) std::copy_n(values, n, kept);
    return;
  }
  if (precision != Precision::bf16) throw std::invalid_argument("ActivationStash: fp32 or bf16");
  fp32_.clear();
  bf16_.resize(n);
  if (values) cpu::to_bfloat16(values, bf16_.data(), int64_t(n));
}

void ActivationStash::keep_part(const float* values, size_t offset, size_t n) {
  if (rounded()) return cpu::to_bfloat16(values, bf16_.data() + offset, int64_t(n));
  std::copy_n(values, n, fp32_.data() + offset);
}

void ActivationStash::restore_part(float* out, size_t offset, size_t n) const {
  if (rounded()) return cpu::to_float(bf16_.data() + offset, out, int64_t(n));
  std::copy_n(fp32_.data() + offset, n, out);
}

void ActivationStash::restore(float* out) const {
  if (rounded()) {
    cpu::to_float(bf16_.data(), out, int64_t(bf16_.size()));
  } else {
    std::copy(fp32_.begin(), fp32_.end(), out);
  }
}

}  // namespace axo
