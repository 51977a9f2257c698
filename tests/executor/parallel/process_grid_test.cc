// Where each rank sits in the grid: the plan's rank order decides which
// dimension varies fastest, and every coordinate is taken by one rank.
#include "executor/parallel/process_grid.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "executor/comm/self_communicator.h"
#include "model/error.h"

namespace axo {
namespace {

ParallelConfig grid_of(const std::string& order) {
  ParallelConfig c;
  c.pipeline = 2, c.data = 3, c.z = 2, c.y = 2, c.x = 2;
  c.order = parse_order(order, "test");
  return c;
}

TEST(ProcessGridTest, EveryRankHasItsOwnCoordinatesAtThePlansStrides) {
  for (const std::string order : {"xyzcdp", "pdczyx", "ypdcxz"}) {
    ParallelConfig c = grid_of(order);
    c.context = 2;
    std::set<std::tuple<int, int, int, int, int, int>> seen;
    for (int rank = 0; rank < c.gpus(); ++rank) {
      const GridCoords at = grid_coords(c, rank);
      EXPECT_TRUE(seen.insert({at.x, at.y, at.z, at.context, at.data, at.pipeline}).second) << order << ", rank " << rank;
      EXPECT_TRUE(at.x < 2 && at.y < 2 && at.z < 2 && at.context < 2 && at.data < 3 && at.pipeline < 2)
          << order << ", rank " << rank;
      const int64_t back = at.x * c.stride(GridDim::x) + at.y * c.stride(GridDim::y) + at.z * c.stride(GridDim::z) +
                           at.context * c.stride(GridDim::context) + at.data * c.stride(GridDim::data) +
                           at.pipeline * c.stride(GridDim::pipeline);
      EXPECT_EQ(back, rank) << order;
    }
    EXPECT_EQ(int64_t(seen.size()), c.gpus());
  }
}

TEST(ProcessGridTest, TheContextCoordinateSitsWhereTheOrderPutsIt) {
  ParallelConfig c = grid_of("cxyzdp");
  c.context = 2;
  EXPECT_EQ(grid_coords(c, 1).context, 1);
  EXPECT_EQ(grid_coords(c, 2).x, 1);
  c.order = parse_order("xycdzp", "test");
  EXPECT_EQ(grid_coords(c, 4).context, 1);
  EXPECT_EQ(grid_coords(c, 8).data, 1);
}

TEST(ProcessGridTest, TheFirstLetterOfTheOrderVariesFastest) {
  // xyzdp: ranks 0 and 1 differ in x; pdzyx: in the stage; ypdxz: in y, then the stage every 2 ranks.
  EXPECT_EQ(grid_coords(grid_of("xyzdp"), 1).x, 1);
  EXPECT_EQ(grid_coords(grid_of("xyzdp"), 2).y, 1);
  EXPECT_EQ(grid_coords(grid_of("pdzyx"), 1).pipeline, 1);
  EXPECT_EQ(grid_coords(grid_of("pdzyx"), 2).data, 1);
  EXPECT_EQ(grid_coords(grid_of("ypdxz"), 1).y, 1);
  EXPECT_EQ(grid_coords(grid_of("ypdxz"), 2).pipeline, 1);
  EXPECT_EQ(grid_coords(grid_of("ypdxz"), 4).data, 1);
  EXPECT_EQ(grid_coords(grid_of("ypdxz"), 12).x, 1);
  EXPECT_EQ(grid_coords(grid_of("ypdxz"), 24).z, 1);
}

// The sharded optimizer needs no group of its own: it runs over data × context.
TEST(ProcessGridTest, ZeroBuildsOnTheDataAndContextGroups) {
  SelfCommunicator world;
  ParallelConfig zero;
  zero.zero = 2;
  const ProcessGrid grid(world, zero);
  EXPECT_EQ(grid.data_and_context().size(), 1);
}

}  // namespace
}  // namespace axo
