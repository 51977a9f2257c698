// A stage's parameters and gradients in fp32 or a 2-byte format (see stage_parameters.h).
#include "executor/parallel/stage_parameters.h"

#include <algorithm>
#include <stdexcept>

namespace axo {

namespace {

DeviceFloats window(DeviceMemory& memory, DeviceUse use) { return DeviceFloats({memory, use}); }

}  // namespace

StageParameters::StageParameters(const ShardLayout& layout, ShardView parameters, ShardGrad gradients,
                                 DeviceMemory& memory, BucketGradients* buckets)
    : layout_(layout),
      p_(parameters),
      g_(gradients),
      buckets_(buckets),
      windows_{window(memory, DeviceUse::weights), window(memory, DeviceUse::weights),
               window(memory, DeviceUse::weights), window(memory, DeviceUse::weights)} {
  if (!buckets_ && (bool(p_.half) != bool(g_.half) || (p_.half && p_.format != g_.format))) {
    throw std::invalid_argument("StageParameters: weights and gradients in one precision");
  }
  for (int i = 0; i < 2; ++i) gradient_windows_.push_back(window(memory, DeviceUse::gradients));
}

int64_t StageParameters::offset(GptTensor kind, int64_t layer) const {
  const LocalTensor* t = layout_.find(kind, layer);
  if (!t) throw std::logic_error("StageParameters: this rank holds no such tensor");
  return t->offset;
}

int64_t StageParameters::size(GptTensor kind, int64_t layer) const { return layout_.find(kind, layer)->size; }

const float* StageParameters::fp32(GptTensor kind, int64_t layer) {
  const ShardView view = weight(kind, layer);
  if (view.f32) return view.f32;
  DeviceFloats& w = windows_[next_window_];
  next_window_ = (next_window_ + 1) % kWindows;
  w.resize(size_t(size(kind, layer)));
  widen(view, w.data(), int64_t(w.size()));
  return w.data();
}

float* StageParameters::fp32_gradient(GptTensor kind, int64_t layer) {
  const ShardGrad grad = gradient(kind, layer);
  if (grad.f32) return grad.f32;
  if (pending_.size() == gradient_windows_.size()) throw std::logic_error("StageParameters: commit() first");
  DeviceFloats& w = gradient_windows_[pending_.size()];
  w.assign(size_t(size(kind, layer)), 0.0f);
  pending_.emplace_back(grad, pending_.size());
  return w.data();
}

void StageParameters::commit() {
  for (const auto& [grad, k] : pending_) add_to(grad, gradient_windows_[k].data(), int64_t(gradient_windows_[k].size()));
  pending_.clear();
}

}  // namespace axo
