// Communicators of the process grid (see process_grid.h).
#include "executor/parallel/process_grid.h"

#include <string>

#include "model/error.h"

namespace axo {

GridCoords grid_coords(const ParallelConfig& config, int rank) {
  auto coordinate = [&](GridDim dim) { return int(rank / config.stride(dim) % config.size(dim)); };
  return {coordinate(GridDim::x), coordinate(GridDim::y), coordinate(GridDim::z), coordinate(GridDim::data),
          coordinate(GridDim::pipeline), coordinate(GridDim::context)};
}

ProcessGrid::ProcessGrid(Communicator& world, const ParallelConfig& config) : world_(world), config_(config) {
  if (config.gpus() != world.size()) {
    throw InputError("the plan's grid (pipeline " + std::to_string(config.pipeline) + " × data " +
                     std::to_string(config.data) + " × context " + std::to_string(config.context) + " × z " +
                     std::to_string(config.z) + " × y " + std::to_string(config.y) + " × x " +
                     std::to_string(config.x) + " = " +
                     std::to_string(config.gpus()) + " ranks) does not match the launch of " +
                     std::to_string(world.size()) + " ranks (mpirun -np)");
  }
  coords_ = grid_coords(config, world.rank());
  const GridCoords& c = coords_;
  // A group's colour is the rank's coordinates with the group's own
  // dimensions zeroed: a number in [0, gpus) that its members share.
  auto colour_without = [&](std::initializer_list<GridDim> dims) {
    GridCoords k = c;
    for (GridDim d : dims) {
      switch (d) {
        case GridDim::x: k.x = 0; break;
        case GridDim::y: k.y = 0; break;
        case GridDim::z: k.z = 0; break;
        case GridDim::context: k.context = 0; break;
        case GridDim::data: k.data = 0; break;
        case GridDim::pipeline: k.pipeline = 0; break;
      }
    }
    return int(k.x * config.stride(GridDim::x) + k.y * config.stride(GridDim::y) + k.z * config.stride(GridDim::z) +
               k.context * config.stride(GridDim::context) + k.data * config.stride(GridDim::data) + k.pipeline * config.stride(GridDim::pipeline));
  };
  const int rank = world.rank();
  x_ = world.split(colour_without({GridDim::x}), c.x);
  y_ = world.split(colour_without({GridDim::y}), c.y);
  z_ = world.split(colour_without({GridDim::z}), c.z);
  context_ = world.split(colour_without({GridDim::context}), c.context);
  data_ = world.split(colour_without({GridDim::data}), c.data);
  pipeline_ = world.split(colour_without({GridDim::pipeline}), c.pipeline);
  tensor_ = world.split(colour_without({GridDim::x, GridDim::y, GridDim::z, GridDim::context}), rank);
  stage_ = world.split(colour_without({GridDim::x, GridDim::y, GridDim::z, GridDim::context, GridDim::data}), rank);
  data_and_context_ = world.split(colour_without({GridDim::data, GridDim::context}), rank);
  z_and_data_ = world.split(colour_without({GridDim::z, GridDim::context, GridDim::data}), rank);
  y_z_and_data_ = world.split(colour_without({GridDim::y, GridDim::z, GridDim::context, GridDim::data}), rank);
  y_and_z_ = world.split(colour_without({GridDim::y, GridDim::z}), rank);
  // Every rank takes part in the split; the middle stages' groups are dropped.
  const bool shares_embedding = first_stage() || last_stage();
  auto embedding = world.split(shares_embedding ? colour_without({GridDim::pipeline}) : config.gpus() + rank, c.pipeline);
  if (config.pipeline > 1 && shares_embedding) embedding_ = std::move(embedding);
}

}  // namespace axo
