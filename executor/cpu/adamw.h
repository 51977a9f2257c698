// The AdamW update over flat fp32 arrays (Loshchilov & Hutter, "Decoupled
// Weight Decay Regularization"), as the CPU optimizer and CPU offload run it:
//   m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//   θ ← θ − lr·( (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε) + λ·θ )
// The loop is written for the compiler to vectorise (AVX2/AVX-512 with
// -march) and is split over threads by the caller if wanted.
#pragma once

#include <cstddef>

namespace axo::cpu {

struct AdamWSettings {
  float learning_rate = 3e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float epsilon = 1e-8f;
  float weight_decay = 0.0f;
};

// One step `step` (1-based) over n parameters; grad is read, the rest updated.
void adamw_update(float* params, const float* grads, float* m, float* v, size_t n,
                  const AdamWSettings& settings, long step);

}  // namespace axo::cpu
