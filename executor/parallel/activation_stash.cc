// Activations kept for backward, in fp32 or a 2-byte format (see activation_stash.h).
#include "executor/parallel/activation_stash.h"

#include <algorithm>
#include <stdexcept>

namespace axo {

namespace {

// `buffer` of n elements in storage of exactly n (none for 0), reallocated where it holds another size.
template <class Vector>
void size_exactly(Vector& buffer, size_t n) {
  if (buffer.capacity() != n) return reallocate_exactly(buffer, n);
  buffer.resize(n);
}

}  // namespace

float* ActivationStash::hold(size_t n) {
  size_exactly(half_, 0);
  size_exactly(fp32_, n);
  return fp32_.data();
}

void ActivationStash::keep(const float* values, size_t n, Precision precision) {
  if (precision == Precision::fp32) {
    float* kept = hold(n);
    if (values) std::copy_n(values, n, kept);
    return;
  }
  format_ = cpu::half_format(precision);
  size_exactly(fp32_, 0);
  size_exactly(half_, n);
  if (values) cpu::to_half(values, half_.data(), int64_t(n), format_);
}

bool ActivationStash::holds_exactly(size_t n, Precision precision) const {
  return precision == Precision::fp32 ? fp32_.capacity() == n && half_.capacity() == 0
                                      : half_.capacity() == n && fp32_.capacity() == 0;
}

void ActivationStash::keep_part(const float* values, size_t offset, size_t n) {
  if (rounded()) return cpu::to_half(values, half_.data() + offset, int64_t(n), format_);
  std::copy_n(values, n, fp32_.data() + offset);
}

void ActivationStash::restore_part(float* out, size_t offset, size_t n) const {
  if (rounded()) return cpu::to_float(half_.data() + offset, out, int64_t(n), format_);
  std::copy_n(fp32_.data() + offset, n, out);
}

void ActivationStash::restore(float* out) const {
  if (rounded()) {
    cpu::to_float(half_.data(), out, int64_t(half_.size()), format_);
  } else {
    std::copy(fp32_.begin(), fp32_.end(), out);
  }
}

}  // namespace axo
