// Group shapes: membership tiles the world, one shape per placement.
#include "calibrate/group_shapes.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace axo::calibration {
namespace {

TEST(GroupShapes, OnePerPlacement) {
  // 8 ranks on nodes of 4: pairs inside a node and across; fours inside and
  // spread over two nodes; all eight.
  const auto shapes = group_shapes(8, 4);
  std::set<std::pair<int64_t, int64_t>> placements;
  for (const GroupShape& s : shapes) EXPECT_TRUE(placements.insert({s.size, s.ranks_per_node}).second);
  EXPECT_TRUE(placements.count({2, 2}));
  EXPECT_TRUE(placements.count({2, 1}));
  EXPECT_TRUE(placements.count({4, 4}));
  EXPECT_TRUE(placements.count({8, 4}));
}

TEST(GroupShapes, MembershipTilesTheWorld) {
  for (const GroupShape& shape : group_shapes(16, 4)) {
    std::map<int64_t, std::set<int64_t>> groups;
    for (int64_t rank = 0; rank < 16; ++rank) {
      groups[group_index(shape, rank)].insert(group_position(shape, rank));
    }
    EXPECT_EQ(int64_t(groups.size()), 16 / shape.size);
    for (const auto& [index, positions] : groups) EXPECT_EQ(int64_t(positions.size()), shape.size);
  }
  // Neighbours of a group of stride 2 are two ranks apart.
  const GroupShape strided{2, 2, 1};
  EXPECT_EQ(group_index(strided, 0), group_index(strided, 2));
  EXPECT_NE(group_index(strided, 0), group_index(strided, 1));
}

}  // namespace
}  // namespace axo::calibration
