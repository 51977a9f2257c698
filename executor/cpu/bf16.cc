// Array conversions between fp32 and bfloat16 (see bf16.h).
#include "executor/cpu/bf16.h"

namespace axo::cpu {

void to_bfloat16(const float* in, bfloat16* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = to_bfloat16(in[i]);
}

void to_float(const bfloat16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
}

}  // namespace axo::cpu
