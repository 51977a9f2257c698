// Activations kept for backward: fp32 kept exactly; bf16 and fp16 kept
// rounded to nearest even in half the booked bytes, and widened exactly.
#include "executor/parallel/activation_stash.h"

#include <gtest/gtest.h>

#include <vector>

namespace axo {
namespace {

std::vector<float> values() {
  std::vector<float> v;
  for (int i = 0; i < 1000; ++i) v.push_back(1.0f / float(i + 3) - 0.25f);
  return v;
}

TEST(ActivationStash, Fp32KeepsTheValues) {
  DeviceMemory memory;
  ActivationStash stash({memory, DeviceUse::activations});
  const auto v = values();
  stash.keep(v.data(), v.size(), Precision::fp32);
  EXPECT_FALSE(stash.rounded());
  EXPECT_EQ(memory.in_use(DeviceUse::activations), int64_t(v.size() * 4));
  std::vector<float> out(v.size());
  stash.restore(out.data());
  EXPECT_EQ(out, v);
}

void expect_kept_rounded(Precision precision) {
  DeviceMemory memory;
  ActivationStash stash({memory, DeviceUse::activations});
  const auto v = values();
  stash.keep(v.data(), v.size(), precision);
  EXPECT_TRUE(stash.rounded());
  EXPECT_EQ(memory.in_use(DeviceUse::activations), int64_t(v.size() * 2));
  std::vector<float> out(v.size());
  stash.restore(out.data());
  const cpu::HalfFormat format = cpu::half_format(precision);
  int changed = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(out[i], cpu::to_float(cpu::to_half(v[i], format), format)) << i;
    changed += out[i] != v[i];
  }
  EXPECT_GT(changed, 0);
  // A part rewritten and read back in the same format.
  stash.keep_part(v.data() + 10, 5, 20);
  std::vector<float> part(20);
  stash.restore_part(part.data(), 5, 20);
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(part[i], cpu::to_float(cpu::to_half(v[10 + i], format), format)) << i;
}

TEST(ActivationStash, Bf16KeepsRoundedValuesInHalfTheBytes) { expect_kept_rounded(Precision::bf16); }
TEST(ActivationStash, Fp16KeepsRoundedValuesInHalfTheBytes) { expect_kept_rounded(Precision::fp16); }

TEST(ActivationStash, HoldGivesFp32StorageToCarve) {
  DeviceMemory memory;
  ActivationStash stash({memory, DeviceUse::activations});
  float* p = stash.hold(10);
  for (int i = 0; i < 10; ++i) p[i] = float(i);
  EXPECT_EQ(stash.data(), p);
  std::vector<float> out(10);
  stash.restore(out.data());
  EXPECT_EQ(out[9], 9.0f);
}

// A stash reused for a smaller chunk books the smaller one's bytes (a vector keeps its storage when
// it shrinks: the model's last chunk, which holds the head, had left its bytes to the next chunk).
TEST(ActivationStash, AReusedStashBooksExactlyWhatItHolds) {
  DeviceMemory memory;
  ActivationStash stash({memory, DeviceUse::activations});
  stash.hold(1000);
  EXPECT_TRUE(stash.holds_exactly(1000, Precision::fp32));
  stash.hold(600);
  EXPECT_EQ(memory.in_use(DeviceUse::activations), 600 * 4);
  EXPECT_TRUE(stash.holds_exactly(600, Precision::fp32));
  EXPECT_FALSE(stash.holds_exactly(600, Precision::bf16));
  stash.keep(nullptr, 800, Precision::bf16);  // the fp32 storage given back
  EXPECT_EQ(memory.in_use(DeviceUse::activations), 800 * 2);
  EXPECT_TRUE(stash.holds_exactly(800, Precision::bf16));
  stash.keep(nullptr, 300, Precision::bf16);
  EXPECT_EQ(memory.in_use(DeviceUse::activations), 300 * 2);
  stash.hold(50);
  EXPECT_EQ(memory.in_use(DeviceUse::activations), 50 * 4);
  EXPECT_EQ(memory.peak(), 1000 * 4);
}

}  // namespace
}  // namespace axo
