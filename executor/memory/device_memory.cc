// Device memory accounting (see device_memory.h).
#include "executor/memory/device_memory.h"

#include <cstdlib>
#include <new>

#include "model/byte_size.h"

namespace axo {

namespace {

constexpr size_t kAlignment = 64;  // a cache line; AVX-512 loads

}  // namespace

std::string bytes_by_use_text(const BytesByUse& bytes) {
  std::string text;
  for (int i = 0; i < kDeviceUses; ++i) {
    text += (i ? ", " : "") + std::string(kMemoryNames[size_t(i)]) + " " + format_bytes(double(bytes[size_t(i)]));
  }
  return text;
}

void* DeviceMemory::allocate(DeviceUse use, size_t bytes) {
  const int64_t size = int64_t(bytes);
  if (capacity_ > 0 && in_use_ + size > capacity_) {
    throw DeviceMemoryExhausted("device memory: " + format_bytes(double(size)) + " of " +
                                kMemoryNames[size_t(use)] + " does not fit: " + format_bytes(double(in_use_)) +
                                " of the " + format_bytes(double(capacity_)) + " limit in use (" +
                                bytes_by_use_text(by_use_) +
                                "); raise the limit, or plan with more ranks, offload, recompute or a smaller microbatch");
  }
  void* pointer = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (pointer == nullptr && bytes > 0) throw std::bad_alloc();
  in_use_ += size;
  by_use_[size_t(use)] += size;
  if (in_use_ > peak_) peak_ = in_use_, peak_by_use_ = by_use_;
  return pointer;
}

void DeviceMemory::release(DeviceUse use, void* pointer, size_t bytes) noexcept {
  std::free(pointer);
  in_use_ -= int64_t(bytes);
  by_use_[size_t(use)] -= int64_t(bytes);
}

}  // namespace axo
