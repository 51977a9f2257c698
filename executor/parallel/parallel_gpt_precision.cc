// ParallelGpt's storage-dependent steps (see parallel_gpt.h): the gradient
// reductions, the clipping norm and scale, AdamW without offload, loss
// scaling's check and unscale, and loading the weights with zero, for fp32
// gradients and for mixed precision's bf16 ones (reduced and updated in fp32,
// stored in bf16).
#include <algorithm>

#include <limits>

#include "executor/parallel/parallel_gpt.h"
#include "executor/timer.h"
#include "executor/train/loss_scaler.h"

namespace axo {

float* ParallelGpt::reduction_buffer(int64_t offset, int64_t size, DeviceFloats& wide) {
  if (!bf16()) return gradients_.data() + offset;
  wide.resize(size_t(size));
  cpu::to_float(gradients16_.data() + offset, wide.data(), size);
  return wide.data();
}

void ParallelGpt::store_reduced(int64_t offset, int64_t size, DeviceFloats& wide) {
  if (!bf16() || wide.empty()) return;
  cpu::to_bfloat16(wide.data(), gradients16_.data() + offset, size);
  DeviceFloats(wide.get_allocator()).swap(wide);
}

void ParallelGpt::add_sum_squares(const LocalTensor& t, double& sum) const {
  if (offload() || !bf16()) {
    const float* g = (offload() ? host_gradients_ : gradients_).data() + t.offset;
    for (int64_t i = 0; i < t.size; ++i) sum += double(g[i]) * g[i];
    return;
  }
  const cpu::bfloat16* g = gradients16_.data() + t.offset;
  for (int64_t i = 0; i < t.size; ++i) sum += double(cpu::to_float(g[i])) * cpu::to_float(g[i]);
}

void ParallelGpt::scale_gradients(float scale) {
  if (offload() || !bf16()) {
    for (float& g : offload() ? host_gradients_ : gradients_) g *= scale;
    return;
  }
  for (cpu::bfloat16& g : gradients16_) g = cpu::to_bfloat16(cpu::to_float(g) * scale);
}

void ParallelGpt::adamw_bf16(long step, double lr, double weight_decay) {
  // Bucket by bucket: the bucket's gradients widened to fp32, AdamW on the fp32 masters, the weights rounded.
  for (const GradientBucket& b : layout_->buckets()) {
    bucket_gradients_.resize(size_t(b.size));
    cpu::to_float(gradients16_.data() + b.offset, bucket_gradients_.data(), b.size);
    adamw_range(b.offset, b.offset + b.size, bucket_gradients_.data(), step, lr, weight_decay);
    timed(times_.optimizer, [&] { cpu::to_bfloat16(master_.data() + b.offset, parameters16_.data() + b.offset, b.size); });
  }
}

void ParallelGpt::load_sharded(const std::vector<float>& full) {
  std::vector<float> local(size_t(layout_->size()), 0.0f);
  layout_->scatter(full.data(), local.data());
  if (bf16()) cpu::to_bfloat16(local.data(), parameters16_.data(), int64_t(local.size()));
  else std::copy(local.begin(), local.end(), parameters_.begin());
  zero_->load_master(local.data());
}

bool ParallelGpt::unscale_gradients(double loss_scale) {
  bool overflow = false;
  timed(times_.optimizer, [&] {
    // The gradients the optimizer reads: with zero this rank's reduced pieces; on the host with offload, else on
    // the device.
    const bool local = zero_                  ? zero_->pieces_overflow()
                       : offload() || !bf16() ? has_inf_or_nan((offload() ? host_gradients_ : gradients_).data(),
                                                               layout_->size())
                                              : has_inf_or_nan(gradients16_.data(), layout_->size());
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
  if (bf16()) gradients16_.at(0) = cpu::to_bfloat16(inf);
  if (!bf16()) gradients_.at(0) = inf;
}

std::vector<float> ParallelGpt::gather_gradients() const {
  if (zero_) return gathered_gradients();  // the reduced pieces: the rest of the buffer holds this rank's own sums
  if (!bf16()) return gather(gradients_.data());
  std::vector<float> local(gradients16_.size());
  cpu::to_float(gradients16_.data(), local.data(), int64_t(local.size()));
  return gather(local.data());
}

std::vector<float> ParallelGpt::gathered_master_weights() const {
  return zero_ ? gather(zero_->local_master_weights().data()) : gather(master_weights().data());
}

}  // namespace axo
