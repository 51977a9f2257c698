// Calibrate's progress: the count ends at the total; each line names the size.
#include "calibrate/progress.h"

#include <gtest/gtest.h>

namespace axo::calibration {
namespace {

TEST(Progress, CountsOnlyThePairsMeasured) {
  const std::vector<GroupShape> shapes = {{2, 1, 2}, {2, 2, 2}, {4, 1, 4}};
  const std::vector<CollectiveOp> ops = {CollectiveOp::all_reduce, CollectiveOp::send_recv};
  // all_reduce on 3 shapes, send_recv on the 2 of two ranks.
  EXPECT_EQ(measured_pairs(shapes, ops), 5u);
  EXPECT_TRUE(measures(CollectiveOp::send_recv, shapes[1]));
  EXPECT_FALSE(measures(CollectiveOp::send_recv, shapes[2]));
}

TEST(Progress, NamesTheSizeAndTheSweep) {
  std::vector<double> sizes;
  for (double bytes = 4; bytes <= 64 << 20; bytes *= 2) sizes.push_back(bytes);  // 4 B ... 64 MiB: 25 sizes
  ASSERT_EQ(sizes.size(), 25u);
  EXPECT_EQ(collective_progress(3, 12, CollectiveOp::all_gather, {4, 1, 4}, sizes, 18),
            "calibrate [3/12] all_gather, groups of 4 (stride 1): 1.00 MiB (size 19 of 25, 4 B to 64.00 MiB)");
}

}  // namespace
}  // namespace axo::calibration
