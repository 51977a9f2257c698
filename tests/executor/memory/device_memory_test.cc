// The device allocator's accounting: in use and peak by category, release,
// and the capacity limit's error naming what did not fit.
#include "executor/memory/device_memory.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace axo {
namespace {

TEST(DeviceMemory, BooksEachVectorUnderItsUse) {
  DeviceMemory memory;
  {
    DeviceFloats weights(1000, 0.0f, {memory, DeviceUse::weights});
    DeviceFloats activations({memory, DeviceUse::activations});
    activations.resize(250);
    EXPECT_EQ(memory.in_use(DeviceUse::weights), 4000);
    EXPECT_EQ(memory.in_use(DeviceUse::activations), 1000);
    EXPECT_EQ(memory.in_use(), 5000);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(weights.data()) % 64, 0u);
    activations = DeviceFloats({memory, DeviceUse::activations});  // freed
    EXPECT_EQ(memory.in_use(), 4000);
    EXPECT_EQ(memory.peak(), 5000);
    EXPECT_EQ(memory.peak_share(DeviceUse::activations), 1000);
  }
  EXPECT_EQ(memory.in_use(), 0);
  EXPECT_EQ(memory.peak(), 5000);
}

TEST(DeviceMemory, PeakSharesAreThoseAtThePeak) {
  DeviceMemory memory;
  void* a = memory.allocate(DeviceUse::gradients, 800);
  void* b = memory.allocate(DeviceUse::comm_buffers, 400);  // peak 1200: 800 + 400
  memory.release(DeviceUse::comm_buffers, b, 400);
  void* c = memory.allocate(DeviceUse::activations, 300);   // 1100: below the peak
  EXPECT_EQ(memory.peak(), 1200);
  EXPECT_EQ(memory.peak_share(DeviceUse::gradients), 800);
  EXPECT_EQ(memory.peak_share(DeviceUse::comm_buffers), 400);
  EXPECT_EQ(memory.peak_share(DeviceUse::activations), 0);
  memory.release(DeviceUse::gradients, a, 800);
  memory.release(DeviceUse::activations, c, 300);
}

TEST(DeviceMemory, ALimitRejectsWhatDoesNotFitAndNamesIt) {
  DeviceMemory memory(1 << 20);  // 1 MiB
  DeviceFloats weights(200000, 0.0f, {memory, DeviceUse::weights});  // 800,000 B
  try {
    DeviceFloats optimizer(100000, 0.0f, {memory, DeviceUse::optimizer});  // 400,000 B more
    FAIL() << "an allocation past the limit succeeded";
  } catch (const DeviceMemoryExhausted& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("390.6 KiB of optimizer does not fit"), std::string::npos) << message;
    EXPECT_NE(message.find("781.2 KiB of the 1.00 MiB limit in use"), std::string::npos) << message;
    EXPECT_NE(message.find("weights 781.2 KiB"), std::string::npos) << message;
  }
  EXPECT_EQ(memory.in_use(), 800000);  // the failed allocation booked nothing
  DeviceFloats fits(60000, 0.0f, {memory, DeviceUse::optimizer});
  EXPECT_EQ(memory.in_use(), 1040000);
}

}  // namespace
}  // namespace axo
