// The AdamW update over flat fp32 arrays (Loshchilov & Hutter, "Decoupled
// Weight Decay Regularization"), as the optimizer runs it on the CPU backend
// and, with offload, on the host:
//   m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//   θ ← θ − lr·( (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε) + λ·θ )
// adamw_update runs it with Eigen's vector instructions (AVX2/AVX-512 as the
// build's -march allows) over cache-sized blocks; adamw_update_ranges splits
// a set of ranges over threads. adamw_update_reference is the scalar loop
// the tests hold them to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace axo::cpu {

struct AdamWSettings {
  float learning_rate = 3e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float epsilon = 1e-8f;
  float weight_decay = 0.0f;
};

// One step `step` (1-based) over n parameters; grad is read, the rest updated.
void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const AdamWSettings& settings,
                  long step);
void adamw_update_reference(float* params, const float* grads, float* m, float* v, size_t n,
                            const AdamWSettings& settings, long step);

// Elements [offset, offset + size) of the flat arrays, with their weight decay.
struct AdamWRange {
  int64_t offset = 0, size = 0;
  float weight_decay = 0;
};
// adamw_update over every range, the elements split evenly over `threads`
// threads (1: this thread). settings.weight_decay is replaced by each range's.
void adamw_update_ranges(float* params, const float* grads, float* m, float* v, const std::vector<AdamWRange>& ranges,
                         const AdamWSettings& settings, long step, int threads);

}  // namespace axo::cpu
