// Dynamic loss scaling, the recipe fp16 training needs (Micikevicius et al.
// 2018, "Mixed Precision Training", section 3.2): the loss is multiplied by
// a scale S before backward so small gradients survive a 2-byte format, the
// gradients are divided by S before the optimizer, and a step whose
// gradients hold an inf or a NaN anywhere (on any rank) is skipped on every
// rank, the scale backed off; after a clean stretch the scale grows again.
// The constants are PyTorch's GradScaler defaults (torch.amp.GradScaler:
// init_scale 2^16, backoff_factor 0.5, growth_factor 2.0) with Megatron-LM's
// window of 1000 clean steps (DynamicGradScaler, --loss-scale-window 1000;
// GradScaler's growth_interval is 2000).
#pragma once

#include <cstdint>

#include "executor/cpu/half.h"

namespace axo {

// What a checkpoint keeps of a scaler, to resume it exactly (scale 0: none kept).
struct LossScalerState {
  double scale = 0;
  int64_t clean_steps = 0, skipped_steps = 0;
};

struct LossScalerSettings {
  double initial_scale = 65536.0;   // 2^16
  double backoff = 0.5;
  double growth = 2.0;
  int64_t growth_interval = 1000;   // clean steps before the scale grows
  double min_scale = 1.0;
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerSettings settings = {}) : s_(settings), scale_(settings.initial_scale) {}
  double scale() const { return scale_; }
  // After a step's backward: `overflow` must already be the same on every
  // rank (reduced over all of them). Returns whether to apply the step;
  // backs the scale off on an overflow, grows it after growth_interval clean steps.
  bool update(bool overflow);
  int64_t skipped_steps() const { return skipped_; }
  int64_t clean_steps() const { return clean_; }
  LossScalerState state() const { return {scale_, clean_, skipped_}; }
  // Continues from a saved state (a state of scale 0 keeps this one).
  void restore(const LossScalerState& state);

 private:
  LossScalerSettings s_;
  double scale_;
  int64_t clean_ = 0, skipped_ = 0;
};

// Whether any of the n values is an inf or a NaN.
bool has_inf_or_nan(const float* values, int64_t n);
bool has_inf_or_nan(const cpu::Half* values, int64_t n, cpu::HalfFormat format);

}  // namespace axo
