// The group shapes training uses, as calibration measures them.
//
// A shape is `size` ranks spaced `stride` apart in the rank order (a grid
// dimension of the planner's configurations); the world splits into
// world/size groups of that shape, which all communicate at once, as they do
// in training. Shapes that place their ranks alike on the nodes (the same
// ranks per node, comm_model.h) cost alike, so one stride stands for each.
#pragma once

#include <cstdint>
#include <vector>

namespace axo::calibration {

struct GroupShape {
  int64_t size = 2;
  int64_t stride = 1;
  int64_t ranks_per_node = 2;  // members of one group sharing a node
};

// Every power-of-two size from 2 up to `world`, at power-of-two strides that
// tile the world, one per distinct placement.
std::vector<GroupShape> group_shapes(int64_t world, int64_t ranks_per_node);

// Which group a rank belongs to, and its position in it.
int64_t group_index(const GroupShape& shape, int64_t rank);
int64_t group_position(const GroupShape& shape, int64_t rank);

}  // namespace axo::calibration
