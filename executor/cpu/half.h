// The CPU backend's 2-byte floating-point storage, in one of two formats:
//  - bf16 (bfloat16): the top 16 bits of an IEEE-754 binary32 (1 sign, 8
//    exponent, 7 stored mantissa bits; unit roundoff 2⁻⁸), fp32's range;
//  - fp16 (IEEE-754 binary16): 1 sign, 5 exponent, 10 stored mantissa bits
//    (unit roundoff 2⁻¹¹), largest finite 65504, so training in it needs
//    loss scaling (train/loss_scaler.h).
// A Half holds the bits; the format travels beside it (one storage type for
// both, so every buffer, view and stash serves either). Arithmetic happens
// in fp32: values are widened exactly and narrowed by rounding to nearest,
// ties to even, as oneDNN, PyTorch and a GPU's conversions round; past the
// largest finite value (by half an ulp or more) they become ±inf, a NaN
// stays a NaN.
#pragma once

#include <bit>
#include <cstdint>

#include "model/transformer_spec.h"

namespace axo::cpu {

enum class HalfFormat : uint8_t { bf16, fp16 };
const char* to_string(HalfFormat format);
// Precision::bf16 or fp16's format; std::invalid_argument for the others.
HalfFormat half_format(Precision precision);

struct Half {
  uint16_t bits = 0;
};
static_assert(sizeof(Half) == 2);

// bf16 by integer arithmetic on the fp32 bits (round to nearest even; a NaN kept quiet, sign and top payload kept).
inline Half to_bfloat16(float value) {
  const uint32_t u = std::bit_cast<uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {uint16_t((u >> 16) | 0x0040u)};
  const uint32_t rounding_bias = 0x7fffu + ((u >> 16) & 1u);
  return {uint16_t((u + rounding_bias) >> 16)};
}
inline float bfloat16_to_float(Half value) { return std::bit_cast<float>(uint32_t(value.bits) << 16); }  // exact

// fp16 by the processor's F16C conversions (VCVTPS2PH with round-to-nearest-even, VCVTPH2PS: half.cc).
Half to_float16(float value);
float float16_to_float(Half value);  // exact

inline Half to_half(float value, HalfFormat format) {
  return format == HalfFormat::bf16 ? to_bfloat16(value) : to_float16(value);
}
inline float to_float(Half value, HalfFormat format) {
  return format == HalfFormat::bf16 ? bfloat16_to_float(value) : float16_to_float(value);
}

// Element-wise conversions of n values.
void to_half(const float* in, Half* out, int64_t n, HalfFormat format);
void to_float(const Half* in, float* out, int64_t n, HalfFormat format);

// Whether a value is an inf or a NaN: its exponent bits all ones.
inline bool is_inf_or_nan(Half value, HalfFormat format) {
  const uint16_t exponent = format == HalfFormat::bf16 ? 0x7f80u : 0x7c00u;
  return (value.bits & exponent) == exponent;
}

}  // namespace axo::cpu
