// AdamW over flat arrays (see adamw.h).
#include "executor/cpu/adamw.h"

#include <cmath>

namespace axo::cpu {

void adamw_update(float* __restrict params, const float* __restrict grads, float* __restrict m,
                  float* __restrict v, size_t n, const AdamWSettings& s, long step) {
  const float correction1 = 1.0f - std::pow(s.beta1, float(step));
  const float correction2 = 1.0f - std::pow(s.beta2, float(step));
  const float lr = s.learning_rate, decay = s.weight_decay, eps = s.epsilon;
  const float b1 = s.beta1, b2 = s.beta2;
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    const float mi = b1 * m[i] + (1.0f - b1) * g;
    const float vi = b2 * v[i] + (1.0f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const float update = (mi / correction1) / (std::sqrt(vi / correction2) + eps);
    params[i] -= lr * (update + decay * params[i]);
  }
}

}  // namespace axo::cpu
