// bfloat16's conversions, bit-exact: round to nearest with ties to even,
// overflow to infinity, infinities and signed zeros kept, NaN stays NaN.
#include "executor/cpu/bf16.h"

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
    const bfloat16 x{uint16_t(b)};
    if (std::isnan(to_float(x))) continue;
    ASSERT_EQ(to_bfloat16(to_float(x)).bits, x.bits) << b;
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
    const bfloat16 b = to_bfloat16(from_bits(nan));
    EXPECT_TRUE(std::isnan(to_float(b))) << std::hex << nan;
    EXPECT_EQ(b.bits & 0x8000, (nan >> 16) & 0x8000) << std::hex << nan;
  }
}

TEST(Bf16, ArrayConversionsMatchTheScalarOnes) {
  const std::vector<float> values = {1.0f, 3.14159f, -1e-20f, 6.5e4f, from_bits(0x3f808000)};
  std::vector<bfloat16> narrow(values.size());
  std::vector<float> wide(values.size());
  to_bfloat16(values.data(), narrow.data(), int64_t(values.size()));
  to_float(narrow.data(), wide.data(), int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(narrow[i].bits, to_bfloat16(values[i]).bits);
    EXPECT_EQ(wide[i], to_float(to_bfloat16(values[i])));
  }
}

}  // namespace
}  // namespace axo::cpu
