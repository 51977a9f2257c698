// A pipeline stage's parameters and gradients as its layers take them: views
// of the rank's shards (shard_layout.h) in fp32 or a 2-byte format
// (shard_view.h). The big matrices go to the GEMMs as they are; the small
// tensors the fp32 ops need (norms' weights and biases) are handed out in
// fp32, widened from bf16 or fp16 into a few reused windows, and their fp32
// gradient windows are added back into the 2-byte gradients, rounded, by
// commit(). Under ZeRO stage 2 the gradients are not one local buffer but
// the buckets in backward (bucket_gradients.h).
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "executor/memory/device_memory.h"
#include "executor/parallel/bucket_gradients.h"
#include "executor/parallel/shard_layout.h"
#include "executor/parallel/shard_view.h"

namespace axo {

class StageParameters {
 public:
  // The windows are booked in `memory` (weights and gradients, by what they hold).
  // With `buckets` (ZeRO stage 2) the gradients are its buckets' and `gradients` is unused.
  StageParameters(const ShardLayout& layout, ShardView parameters, ShardGrad gradients, DeviceMemory& memory,
                  BucketGradients* buckets = nullptr);

  bool half() const { return p_.half != nullptr; }  // 2-byte storage
  ShardView weight(GptTensor kind, int64_t layer = -1) const { return p_ + offset(kind, layer); }
  ShardGrad gradient(GptTensor kind, int64_t layer = -1) const {
    return buckets_ ? buckets_->at(offset(kind, layer)) : g_ + offset(kind, layer);
  }
  // The tensor in fp32: itself, or widened into the next of kWindows windows
  // (valid until kWindows more calls).
  const float* fp32(GptTensor kind, int64_t layer = -1);
  // Its gradient in fp32 to accumulate into: itself, or a zeroed window that
  // commit() adds into the 2-byte gradient.
  float* fp32_gradient(GptTensor kind, int64_t layer = -1);
  void commit();

 private:
  static constexpr size_t kWindows = 4;
  int64_t offset(GptTensor kind, int64_t layer) const;
  int64_t size(GptTensor kind, int64_t layer) const;
  const ShardLayout& layout_;
  ShardView p_;
  ShardGrad g_;
  BucketGradients* buckets_;
  std::array<DeviceFloats, kWindows> windows_;
  size_t next_window_ = 0;
  std::vector<DeviceFloats> gradient_windows_;
  std::vector<std::pair<ShardGrad, size_t>> pending_;  // 2-byte gradient, its window in gradient_windows_
};

}  // namespace axo
