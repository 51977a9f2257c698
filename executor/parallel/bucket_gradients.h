// ZeRO stage 2's gradient storage on one rank (zero_optimizer.h): no
// buffer of the whole local layout, only the gradient buckets
// (shard_layout.h) a microbatch's backward is filling. A bucket's buffer is
// taken, zeroed, when the backward first writes into it, and given back once
// its microbatch's gradient has been handed to the reduce-scatter, so the
// rank holds the buckets of the layer in backward (and, with one stage, the
// embedding's bucket, which the head's backward starts) rather than e bytes
// per local parameter. The buffers are in the storage format of the
// gradients (fp32, or bf16 / fp16: shard_view.h) and booked as gradients.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/memory/device_memory.h"
#include "executor/parallel/activation_stash.h"
#include "executor/parallel/shard_layout.h"
#include "executor/parallel/shard_view.h"

namespace axo {

class BucketGradients {
 public:
  // fp32 buckets with half == false, else 2-byte ones in `format`.
  BucketGradients(const ShardLayout& layout, bool half, cpu::HalfFormat format, DeviceMemory& memory);

  // The gradient at `offset` of the local layout, its bucket taken (zeroed) if it is not held.
  ShardGrad at(int64_t offset);
  bool held(size_t bucket) const { return half_ ? !halves_[bucket].empty() : !floats_[bucket].empty(); }
  // Bucket `bucket`'s buffer (held), and its release.
  ShardGrad bucket(size_t bucket);
  void release(size_t bucket);

 private:
  size_t bucket_of(int64_t offset) const;
  const ShardLayout& layout_;
  bool half_;
  cpu::HalfFormat format_;
  std::vector<DeviceFloats> floats_;  // per bucket; empty: not held
  std::vector<DeviceHalves> halves_;
};

}  // namespace axo
