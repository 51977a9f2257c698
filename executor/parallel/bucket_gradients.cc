// ZeRO stage 2's per-bucket gradient buffers (see bucket_gradients.h).
#include "executor/parallel/bucket_gradients.h"

#include <algorithm>
#include <stdexcept>

namespace axo {

BucketGradients::BucketGradients(const ShardLayout& layout, bool half, cpu::HalfFormat format, DeviceMemory& memory)
    : layout_(layout), half_(half), format_(format) {
  const size_t buckets = layout.buckets().size();
  floats_.assign(buckets, DeviceFloats({memory, DeviceUse::gradients}));
  halves_.assign(buckets, DeviceHalves({memory, DeviceUse::gradients}));
}

// The buckets tile the local layout in order of their offsets.
size_t BucketGradients::bucket_of(int64_t offset) const {
  const std::vector<GradientBucket>& buckets = layout_.buckets();
  auto after = std::upper_bound(buckets.begin(), buckets.end(), offset,
                                [](int64_t at, const GradientBucket& b) { return at < b.offset; });
  if (after == buckets.begin() || offset >= std::prev(after)->offset + std::prev(after)->size) {
    throw std::logic_error("BucketGradients: offset outside every bucket");
  }
  return size_t(std::prev(after) - buckets.begin());
}

ShardGrad BucketGradients::at(int64_t offset) {
  const size_t k = bucket_of(offset);
  const GradientBucket& b = layout_.buckets()[k];
  if (!held(k)) half_ ? halves_[k].assign(size_t(b.size), cpu::Half{}) : floats_[k].assign(size_t(b.size), 0.0f);
  return bucket(k) + (offset - b.offset);
}

ShardGrad BucketGradients::bucket(size_t k) {
  if (!held(k)) throw std::logic_error("BucketGradients: bucket not held");
  return half_ ? ShardGrad(halves_[k].data(), format_) : ShardGrad(floats_[k].data());
}

void BucketGradients::release(size_t k) {
  // Freed, not kept for reuse: what the rank holds between microbatches is the shard alone.
  DeviceFloats(floats_[k].get_allocator()).swap(floats_[k]);
  DeviceHalves(halves_[k].get_allocator()).swap(halves_[k]);
}

}  // namespace axo
