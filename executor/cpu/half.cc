// Conversions between fp32 and the 2-byte formats (see half.h). fp16's are
// the processor's: F16C's VCVTPS2PH / VCVTPH2PS (Intel SDM vol. 2; rounding
// to nearest even by the instruction's immediate), 16 lanes at a time with
// AVX-512F (_mm512_cvtps_ph) where the processor has it, else 8 (F16C's
// _mm256_cvtps_ph); no rounding is written here. The functions carry their
// instruction sets as target attributes, so the rest of the build needs no
// -m flags, and the processor is asked (CPUID) before they run.
#include "executor/cpu/half.h"

#include <cpuid.h>
#include <immintrin.h>

#include <stdexcept>
#include <string>

namespace axo::cpu {

namespace {

constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// CPUID leaf 1, ECX bit 29: F16C (Intel SDM vol. 2, table 3-10).
bool processor_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}

void require_f16c() {
  static const bool has = processor_has_f16c();
  if (!has) throw std::runtime_error("fp16 storage needs a processor with F16C conversions (x86-64 since 2012)");
}

bool processor_has_avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

__attribute__((target("f16c"))) uint16_t f16c_narrow(float value) {
  return uint16_t(_cvtss_sh(value, kNearestEven));
}

__attribute__((target("f16c"))) float f16c_widen(uint16_t bits) { return _cvtsh_ss(bits); }

__attribute__((target("avx512f,f16c"))) void narrow_avx512(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // maskz with every lane set: _mm512_cvtps_ph itself, without GCC 12's uninitialized-source warning
    const __m256i h = _mm512_maskz_cvtps_ph(__mmask16(0xffff), _mm512_loadu_ps(in + i), kNearestEven);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
  for (; i < n; ++i) out[i].bits = f16c_narrow(in[i]);
}

__attribute__((target("avx512f,f16c"))) void widen_avx512(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(__mmask16(0xffff), h));
  }
  for (; i < n; ++i) out[i] = f16c_widen(in[i].bits);
}

__attribute__((target("avx,f16c"))) void narrow_f16c(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), kNearestEven);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i].bits = f16c_narrow(in[i]);
}

__attribute__((target("avx,f16c"))) void widen_f16c(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  for (; i < n; ++i) out[i] = f16c_widen(in[i].bits);
}

}  // namespace

const char* to_string(HalfFormat format) { return format == HalfFormat::bf16 ? "bf16" : "fp16"; }

HalfFormat half_format(Precision precision) {
  if (precision == Precision::bf16) return HalfFormat::bf16;
  if (precision == Precision::fp16) return HalfFormat::fp16;
  throw std::invalid_argument(std::string("half_format: ") + to_string(precision) + " is no 2-byte format");
}

Half to_float16(float value) {
  require_f16c();
  return {f16c_narrow(value)};
}

float float16_to_float(Half value) {
  require_f16c();
  return f16c_widen(value.bits);
}

void to_half(const float* in, Half* out, int64_t n, HalfFormat format) {
  if (format == HalfFormat::bf16) {
    for (int64_t i = 0; i < n; ++i) out[i] = to_bfloat16(in[i]);
    return;
  }
  require_f16c();
  if (processor_has_avx512f()) return narrow_avx512(in, out, n);
  narrow_f16c(in, out, n);
}

void to_float(const Half* in, float* out, int64_t n, HalfFormat format) {
  if (format == HalfFormat::bf16) {
    for (int64_t i = 0; i < n; ++i) out[i] = bfloat16_to_float(in[i]);
    return;
  }
  require_f16c();
  if (processor_has_avx512f()) return widen_avx512(in, out, n);
  widen_f16c(in, out, n);
}

}  // namespace axo::cpu
