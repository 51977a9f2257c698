// The 2-byte formats' conversions, bit-exact, bf16's and fp16's alike: round
// to nearest with ties to even, overflow to infinity, infinities and signed
// zeros kept, NaN stays NaN; the array conversions agree with the scalar ones.
#include "executor/cpu/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace axo::cpu {
namespace {

uint16_t bits_of(float value) { return to_bfloat16(value).bits; }
float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(Bf16, ExactValuesAndWideningRoundTrip) {
  EXPECT_EQ(bits_of(1.0f), 0x3f80);
  EXPECT_EQ(bits_of(-2.0f), 0xc000);
  EXPECT_EQ(bits_of(0.0f), 0x0000);
  EXPECT_EQ(bits_of(-0.0f), 0x8000);
  for (uint32_t b = 0; b < 0x10000; ++b) {  // every bf16 that is not a NaN survives fp32 and back
    const Half x{uint16_t(b)};
    if (std::isnan(bfloat16_to_float(x))) continue;
    ASSERT_EQ(to_bfloat16(bfloat16_to_float(x)).bits, x.bits) << b;
  }
}

TEST(Bf16, RoundsToNearestTiesToEven) {
  // 1 + 2⁻⁸ lies halfway between 1 (even mantissa 0x00) and 1 + 2⁻⁷ (0x01): down to 1.
  EXPECT_EQ(bits_of(from_bits(0x3f808000)), 0x3f80);
  // 1 + 3·2⁻⁸ lies halfway between 0x3f81 (odd) and 0x3f82 (even): up.
  EXPECT_EQ(bits_of(from_bits(0x3f818000)), 0x3f82);
  // Just below and above a half: nearest.
  EXPECT_EQ(bits_of(from_bits(0x3f807fff)), 0x3f80);
  EXPECT_EQ(bits_of(from_bits(0x3f808001)), 0x3f81);
  EXPECT_EQ(bits_of(from_bits(0xbf808001)), 0xbf81);  // the sign does not change the magnitude's rounding
  // A carry through the mantissa into the exponent: 1.998046875 rounds up to 2.
  EXPECT_EQ(bits_of(from_bits(0x3fffc000)), 0x4000);
  // Subnormals round like the rest.
  EXPECT_EQ(bits_of(from_bits(0x00018000)), 0x0002);
  EXPECT_EQ(bits_of(from_bits(0x00008000)), 0x0000);
}

TEST(Bf16, OverflowInfinityAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bits_of(inf), 0x7f80);
  EXPECT_EQ(bits_of(-inf), 0xff80);
  EXPECT_EQ(bits_of(std::numeric_limits<float>::max()), 0x7f80);  // past bf16's largest by more than half an ulp
  EXPECT_EQ(bits_of(from_bits(0x7f7f7fff)), 0x7f7f);             // below the half-ulp: the largest finite bf16
  EXPECT_EQ(bits_of(from_bits(0x7f7f8000)), 0x7f80);             // the tie rounds to even, which is infinity
  // A quiet NaN, and signalling ones whose payload is only in the low bits
  // (rounded as numbers they would become infinity, or carry into the sign).
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    const Half b = to_bfloat16(from_bits(nan));
    EXPECT_TRUE(std::isnan(bfloat16_to_float(b))) << std::hex << nan;
    EXPECT_EQ(b.bits & 0x8000, (nan >> 16) & 0x8000) << std::hex << nan;
  }
}

uint16_t fp16_bits(float value) { return to_float16(value).bits; }

TEST(Fp16, ExactValuesAndWideningRoundTrip) {
  EXPECT_EQ(fp16_bits(1.0f), 0x3c00);
  EXPECT_EQ(fp16_bits(-2.0f), 0xc000);
  EXPECT_EQ(fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(fp16_bits(65504.0f), 0x7bff);  // the largest finite fp16
  EXPECT_EQ(float16_to_float({0x0001}), std::ldexp(1.0f, -24));  // the smallest subnormal
  for (uint32_t b = 0; b < 0x10000; ++b) {  // every fp16 that is not a NaN survives fp32 and back
    const Half x{uint16_t(b)};
    if (std::isnan(float16_to_float(x))) continue;
    ASSERT_EQ(to_float16(float16_to_float(x)).bits, x.bits) << b;
  }
}

TEST(Fp16, RoundsToNearestTiesToEven) {
  const float ulp = std::ldexp(1.0f, -10);  // fp16's spacing in [1, 2)
  EXPECT_EQ(fp16_bits(1.0f + ulp / 2), 0x3c00);          // halfway to 0x3c01 (odd): down, to even
  EXPECT_EQ(fp16_bits(1.0f + 3 * ulp / 2), 0x3c02);      // halfway between 0x3c01 and 0x3c02 (even): up
  EXPECT_EQ(fp16_bits(std::nextafter(1.0f + ulp / 2, 2.0f)), 0x3c01);  // past the half: nearest
  EXPECT_EQ(fp16_bits(-(1.0f + 3 * ulp / 2)), 0xbc02);
  EXPECT_EQ(fp16_bits(2.0f - ulp / 4), 0x4000);          // a carry into the exponent
  EXPECT_EQ(fp16_bits(std::ldexp(1.0f, -25)), 0x0000);   // half the smallest subnormal: the tie goes to zero (even)
  EXPECT_EQ(fp16_bits(std::ldexp(3.0f, -26)), 0x0001);   // three quarters of it: up
}

TEST(Fp16, OverflowInfinityAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fp16_bits(inf), 0x7c00);
  EXPECT_EQ(fp16_bits(-inf), 0xfc00);
  EXPECT_EQ(fp16_bits(65519.0f), 0x7bff);  // below 65504 + half an ulp (16): the largest finite
  EXPECT_EQ(fp16_bits(65520.0f), 0x7c00);  // the tie rounds to even, which is infinity
  EXPECT_EQ(fp16_bits(1e5f), 0x7c00);      // fp32 values past fp16's range: what loss scaling guards against
  EXPECT_TRUE(std::isnan(float16_to_float(to_float16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(is_inf_or_nan(to_float16(1e5f), HalfFormat::fp16));
  EXPECT_TRUE(is_inf_or_nan(to_float16(std::nanf("")), HalfFormat::fp16));
  EXPECT_FALSE(is_inf_or_nan(to_float16(65504.0f), HalfFormat::fp16));
  EXPECT_FALSE(is_inf_or_nan(to_bfloat16(1e5f), HalfFormat::bf16));  // within bf16's range
  EXPECT_TRUE(is_inf_or_nan(to_bfloat16(inf), HalfFormat::bf16));
}

TEST(Half, FormatsOfPrecisions) {
  EXPECT_EQ(half_format(Precision::bf16), HalfFormat::bf16);
  EXPECT_EQ(half_format(Precision::fp16), HalfFormat::fp16);
  EXPECT_THROW(half_format(Precision::fp32), std::invalid_argument);
}

// 37 values: two 16-lane blocks and a tail, so every path of the array conversions runs.
TEST(Half, ArrayConversionsMatchTheScalarOnes) {
  std::vector<float> values = {1.0f, 3.14159f, -1e-20f, 6.5e4f, from_bits(0x3f808000), 65520.0f, 1e-7f, -0.0f};
  for (int i = 0; values.size() < 37; ++i) values.push_back(float(i) * 0.37f - 5.0f);
  for (HalfFormat format : {HalfFormat::bf16, HalfFormat::fp16}) {
    std::vector<Half> narrow(values.size());
    std::vector<float> wide(values.size());
    to_half(values.data(), narrow.data(), int64_t(values.size()), format);
    to_float(narrow.data(), wide.data(), int64_t(values.size()), format);
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(narrow[i].bits, to_half(values[i], format).bits) << to_string(format) << " " << i;
      EXPECT_EQ(wide[i], to_float(to_half(values[i], format), format)) << to_string(format) << " " << i;
    }
  }
}

}  // namespace
}  // namespace axo::cpu
