// bfloat16, the 2-byte storage type of the CPU backend's bf16 GEMMs: the top
// 16 bits of an IEEE-754 binary32 (1 sign, 8 exponent, 7 stored mantissa bits,
// so 8 significant bits with the implicit one; unit roundoff 2⁻⁸). Arithmetic
// happens in fp32: values are widened exactly and narrowed by rounding to
// nearest, ties to even, as oneDNN and PyTorch round.
#pragma once

#include <bit>
#include <cstdint>

namespace axo::cpu {

struct bfloat16 {
  uint16_t bits = 0;
};
static_assert(sizeof(bfloat16) == 2);

// Round to nearest, ties to even. Values past the largest bf16 (by half an
// ulp or more) become ±inf; a NaN stays a NaN (quiet, sign and top payload kept).
inline bfloat16 to_bfloat16(float value) {
  const uint32_t u = std::bit_cast<uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {uint16_t((u >> 16) | 0x0040u)};
  const uint32_t rounding_bias = 0x7fffu + ((u >> 16) & 1u);
  return {uint16_t((u + rounding_bias) >> 16)};
}

// Exact: every bf16 is an fp32.
inline float to_float(bfloat16 value) { return std::bit_cast<float>(uint32_t(value.bits) << 16); }

// Element-wise conversions of n values.
void to_bfloat16(const float* in, bfloat16* out, int64_t n);
void to_float(const bfloat16* in, float* out, int64_t n);

}  // namespace axo::cpu
