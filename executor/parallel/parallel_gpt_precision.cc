// ParallelGpt's storage-dependent steps (see parallel_gpt.h): the gradient
// reductions, the clipping norm and scale, AdamW without offload, loss
// scaling's check and unscale, and loading the weights with zero, for fp32
// gradients and for mixed precision's 2-byte ones, bf16 or fp16 (reduced and
// updated in fp32, stored in 2 bytes).
#include <algorithm>

#include <limits>

#include "executor/parallel/parallel_gpt.h"
#include "executor/timer.h"
#include "executor/train/loss_scaler.h"

namespace axo {

float* ParallelGpt::reduction_buffer(int64_t offset, int64_t size, DeviceFloats& wide) {
  if (!half()) return gradients_.data() + offset;
  wide.resize(size_t(size));
  cpu::to_float(gradients16_.data() + offset, wide.data(), size, format());
  return wide.data();
}

void ParallelGpt::store_reduced(int64_t offset, int64_t size, DeviceFloats& wide) {
  if (!half() || wide.empty()) return;
  cpu::to_half(wide.data(), gradients16_.data() + offset, size, format());
  DeviceFloats(wide.get_allocator()).swap(wide);
}

void ParallelGpt::add_sum_squares(const LocalTensor& t, double& sum) const {
  if (offload() || !half()) {
    const float* g = (offload() ? host_gradients_ : gradients_).data() + t.offset;
    for (int64_t i = 0; i < t.size; ++i) sum += double(g[i]) * g[i];
    return;
  }
  const cpu::Half* g = gradients16_.data() + t.offset;
  const cpu::HalfFormat f = format();
  for (int64_t i = 0; i < t.size; ++i) {
    const float value = cpu::to_float(g[i], f) * half_gradient_factor_;
    sum += double(value) * value;
  }
}

void ParallelGpt::scale_gradients(float scale) {
  if (offload() || !half()) {
    for (float& g : offload() ? host_gradients_ : gradients_) g *= scale;
    return;
  }
  // Owed, not rounded in: fp16 gradients unscaled in place would fall back into the range loss scaling lifted
  // them out of (below 2⁻¹⁴ fp16 is subnormal, below 2⁻²⁴ zero).
  half_gradient_factor_ *= scale;
}

void ParallelGpt::adamw_half(long step, double lr, double weight_decay) {
  // Bucket by bucket: the bucket's gradients widened to fp32, AdamW on the fp32 masters, the weights rounded.
  for (const GradientBucket& b : layout_->buckets()) {
    bucket_gradients_.resize(size_t(b.size));
    cpu::to_float(gradients16_.data() + b.offset, bucket_gradients_.data(), b.size, format());
    if (half_gradient_factor_ != 1) {
      for (float& g : bucket_gradients_) g *= half_gradient_factor_;
    }
    adamw_range(b.offset, b.offset + b.size, bucket_gradients_.data(), step, lr, weight_decay);
    timed(times_.optimizer,
          [&] { cpu::to_half(master_.data() + b.offset, parameters16_.data() + b.offset, b.size, format()); });
  }
}

void ParallelGpt::load_sharded(const std::vector<float>& full) {
  std::vector<float> local(size_t(layout_->size()), 0.0f);
  layout_->scatter(full.data(), local.data());
  if (half()) cpu::to_half(local.data(), parameters16_.data(), int64_t(local.size()), format());
  else std::copy(local.begin(), local.end(), parameters_.begin());
  zero_->load_master(local.data());
}

bool ParallelGpt::unscale_gradients(double loss_scale) {
  bool overflow = false;
  timed(times_.optimizer, [&] {
    // The gradients the optimizer reads: with zero this rank's reduced pieces; on the host with offload, else on
    // the device.
    const bool local = zero_                  ? zero_->pieces_overflow()
                       : offload() || !half() ? has_inf_or_nan((offload() ? host_gradients_ : gradients_).data(),
                                                               layout_->size())
                                              : has_inf_or_nan(gradients16_.data(), layout_->size(), format());
    float flag = local ? 1.0f : 0.0f;
    grid_.world().all_reduce(&flag, 1);
    overflow = flag > 0;
    if (overflow || loss_scale == 1) return;
    if (zero_) return zero_->scale_pieces(float(1.0 / loss_scale));
    scale_gradients(float(1.0 / loss_scale));
  });
  return overflow;
}

void ParallelGpt::inject_gradient_overflow() {
  if (zero_) return zero_->inject_overflow();
  const float inf = std::numeric_limits<float>::infinity();
  if (offload()) host_gradients_.at(0) = inf;
  if (half()) gradients16_.at(0) = cpu::to_half(inf, format());
  if (!half()) gradients_.at(0) = inf;
}

std::vector<float> ParallelGpt::gather_gradients() const {
  if (zero_) return gathered_gradients();  // the reduced pieces: the rest of the buffer holds this rank's own sums
  if (!half()) return gather(gradients_.data());
  std::vector<float> local(gradients16_.size());
  cpu::to_float(gradients16_.data(), local.data(), int64_t(local.size()), format());
  for (float& g : local) g *= half_gradient_factor_;
  return gather(local.data());
}

std::vector<float> ParallelGpt::gathered_master_weights() const {
  return zero_ ? gather(zero_->local_master_weights().data()) : gather(master_weights().data());
}

}  // namespace axo
