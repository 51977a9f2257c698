// Dynamic loss scaling (see loss_scaler.h).
#include "executor/train/loss_scaler.h"

#include <algorithm>
#include <cmath>

namespace axo {

bool LossScaler::update(bool overflow) {
  if (overflow) {
    scale_ = std::max(s_.min_scale, scale_ * s_.backoff);
    clean_ = 0, ++skipped_;
    return false;
  }
  if (++clean_ == s_.growth_interval) scale_ *= s_.growth, clean_ = 0;
  return true;
}

void LossScaler::restore(const LossScalerState& state) {
  if (state.scale <= 0) return;
  scale_ = state.scale, clean_ = state.clean_steps, skipped_ = state.skipped_steps;
}

bool has_inf_or_nan(const float* values, int64_t n) {
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) bad |= !std::isfinite(values[i]);
  return bad;
}

bool has_inf_or_nan(const cpu::Half* values, int64_t n, cpu::HalfFormat format) {
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) bad |= cpu::is_inf_or_nan(values[i], format);
  return bad;
}

}  // namespace axo
