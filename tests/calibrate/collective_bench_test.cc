// Message sizes as calibration measures them (calibrate/collective_bench.h).
#include "calibrate/collective_bench.h"

#include <gtest/gtest.h>

namespace axo::calibration {
namespace {

// Whole floats, a multiple of the ranks: sizes below a float per rank all measure one per rank
// (the sweep measures each once), larger ones round down to the group.
TEST(CollectiveBench, MessagesAreWholeFloatsOverTheRanks) {
  for (double bytes : {0.5, 1.0, 2.0, 4.0, 8.0}) EXPECT_EQ(measured_message_bytes(bytes, 2), 8) << bytes;
  EXPECT_EQ(measured_message_bytes(16, 2), 16);
  EXPECT_EQ(measured_message_bytes(100, 8), 96);
  EXPECT_EQ(measured_message_bytes(1 << 20, 4), 1 << 20);
}

}  // namespace
}  // namespace axo::calibration
