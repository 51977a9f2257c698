// Every byte a rank holds on its device, through one allocator with a
// capacity limit. Each allocation is booked under what it is for (the
// memory model's categories, model/breakdown.h: weights, gradients,
// optimizer state, activations, communication buffers), so a run can report
// its peak by category and compare it with the memory model.
//
// On the CPU backend the "device" is host memory with the same accounting:
// a limit makes a plan that does not fit fail here as it would on a GPU,
// and offload shows its saving in the same numbers (its host-side state is
// booked in a second DeviceMemory, without a limit).
//
// An allocation past the limit throws DeviceMemoryExhausted, whose message
// names what did not fit, its size, and what was in use by category.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "executor/cpu/half.h"
#include "model/breakdown.h"
#include "model/error.h"

namespace axo {

// In the order of kMemoryNames (model/breakdown.h), which names them.
enum class DeviceUse { weights, gradients, optimizer, activations, comm_buffers };
inline constexpr int kDeviceUses = int(kMemoryNames.size());
using BytesByUse = std::array<int64_t, kDeviceUses>;

// "weights 1.20 MiB, gradients 1.20 MiB, ...": bytes by use, for messages and logs.
std::string bytes_by_use_text(const BytesByUse& bytes);

// A plan that needs more device memory than the limit (an InputError: the
// user chose the plan and the limit).
class DeviceMemoryExhausted : public InputError {
 public:
  using InputError::InputError;
};

class DeviceMemory {
 public:
  // capacity_bytes 0: no limit (the accounting still runs).
  explicit DeviceMemory(int64_t capacity_bytes = 0) : capacity_(capacity_bytes) {}
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // 64-byte aligned; DeviceMemoryExhausted past the limit.
  void* allocate(DeviceUse use, size_t bytes);
  void release(DeviceUse use, void* pointer, size_t bytes) noexcept;

  int64_t in_use() const { return in_use_; }
  int64_t in_use(DeviceUse use) const { return by_use_[size_t(use)]; }
  // The most ever in use at once, and each use's bytes at that moment.
  int64_t peak() const { return peak_; }
  const BytesByUse& peak_by_use() const { return peak_by_use_; }
  int64_t peak_share(DeviceUse use) const { return peak_by_use_[size_t(use)]; }

 private:
  int64_t capacity_;
  int64_t in_use_ = 0, peak_ = 0;
  BytesByUse by_use_{}, peak_by_use_{};
};

// A standard allocator booking into a DeviceMemory under one use, so device
// buffers are std::vectors (DeviceFloats) that carry their accounting.
template <class T>
class DeviceAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  DeviceAllocator(DeviceMemory& memory, DeviceUse use) : memory_(&memory), use_(use) {}
  template <class U>
  DeviceAllocator(const DeviceAllocator<U>& other) : memory_(other.memory()), use_(other.use()) {}

  T* allocate(size_t n) { return static_cast<T*>(memory_->allocate(use_, n * sizeof(T))); }
  void deallocate(T* pointer, size_t n) noexcept { memory_->release(use_, pointer, n * sizeof(T)); }

  DeviceMemory* memory() const { return memory_; }
  DeviceUse use() const { return use_; }
  template <class U>
  bool operator==(const DeviceAllocator<U>& other) const {
    return memory_ == other.memory() && use_ == other.use();
  }
  template <class U>
  bool operator!=(const DeviceAllocator<U>& other) const {
    return !(*this == other);
  }

 private:
  DeviceMemory* memory_;
  DeviceUse use_;
};

using DeviceFloats = std::vector<float, DeviceAllocator<float>>;
using DeviceHalves = std::vector<cpu::Half, DeviceAllocator<cpu::Half>>;  // 2-byte values, their format kept beside

// `buffer` in fresh storage of exactly `size` elements, its old storage freed first (a vector's own
// growth books up to twice what it holds, and it keeps its storage when it shrinks); contents dropped.
template <class Vector>
void reallocate_exactly(Vector& buffer, size_t size) {
  buffer = Vector(buffer.get_allocator());
  buffer.reserve(size);
  buffer.resize(size);
}

// `size` elements (contents undefined), its capacity grown to exactly that where it is less.
template <class Vector>
void resize_exactly(Vector& buffer, size_t size) {
  if (buffer.capacity() < size) return reallocate_exactly(buffer, size);
  buffer.resize(size);
}

}  // namespace axo
