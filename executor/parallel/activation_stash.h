// One microbatch's activations kept from a chunk's forward to its backward
// (gpt_stage.h), in storage of exactly their size: a stage reuses freed
// stashes, and one reused for a smaller chunk (the model's last chunk holds
// the head) would otherwise book the larger one's bytes. In fp32 without full
// recompute the stage carves them straight into the stash; otherwise it
// computes in rolling fp32 views and keeps them region by region, in bf16 or
// fp16 (mixed precision) rounded to the 2-byte format (cpu/half.h), half the
// bytes, widening them again for backward, as a GPU's mixed-precision
// training keeps 2-byte activations and computes its element-wise ops in fp32
// registers.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/cpu/half.h"
#include "executor/memory/device_memory.h"
#include "model/transformer_spec.h"

namespace axo {

class ActivationStash {
 public:
  explicit ActivationStash(const DeviceAllocator<float>& allocator) : fp32_(allocator), half_(allocator) {}

  // fp32 storage of exactly n elements, to carve into (contents kept where it held n already).
  float* hold(size_t n);
  float* data() { return fp32_.data(); }
  // Keeps n values at `precision`: copied (fp32) or rounded to nearest even
  // (bf16, fp16); null values: only sized, for keep_part.
  void keep(const float* values, size_t n, Precision precision);
  // Writes the kept values to `out` (widened from the 2-byte format exactly).
  void restore(float* out) const;
  // The same for n values from `offset` of what keep() sized.
  void keep_part(const float* values, size_t offset, size_t n);
  void restore_part(float* out, size_t offset, size_t n) const;
  bool rounded() const { return !half_.empty(); }
  // Whether its storage is exactly n values at `precision` (what keep or hold would size it to).
  bool holds_exactly(size_t n, Precision precision) const;

 private:
  DeviceFloats fp32_;
  DeviceHalves half_;
  cpu::HalfFormat format_ = cpu::HalfFormat::bf16;  // half_'s
};

}  // namespace axo
