// Group shapes and membership (see group_shapes.h).
#include "calibrate/group_shapes.h"

#include <set>
#include <utility>

#include "model/comm_model.h"

namespace axo::calibration {

std::vector<GroupShape> group_shapes(int64_t world, int64_t ranks_per_node) {
  std::vector<GroupShape> shapes;
  std::set<std::pair<int64_t, int64_t>> seen;  // (size, ranks per node)
  for (int64_t size = 2; size <= world; size *= 2) {
    for (int64_t stride = 1; size * stride <= world; stride *= 2) {
      if (world % (size * stride) != 0) continue;
      const int64_t per_node = place_group(size, stride, ranks_per_node, world).ranks_per_node;
      if (seen.insert({size, per_node}).second) shapes.push_back({size, stride, per_node});
    }
  }
  return shapes;
}

int64_t group_index(const GroupShape& shape, int64_t rank) {
  return rank / (shape.size * shape.stride) * shape.stride + rank % shape.stride;
}

int64_t group_position(const GroupShape& shape, int64_t rank) {
  return rank / shape.stride % shape.size;
}

}  // namespace axo::calibration
