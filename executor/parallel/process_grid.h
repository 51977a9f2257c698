// The process grid of a plan: where this rank sits in
// Gpipe × Gdata × Gz × Gy × Gx and the communicators of the groups it
// belongs to (ARCHITECTURE.md, "The 4D tensor-parallel linear layer").
//
// World rank r has coordinate (r / stride(d)) mod size(d) along each
// dimension d, with strides from the plan's rank order (innermost first),
// so the ranks of a group sit exactly where the planner placed them.
#pragma once

#include <memory>

#include "executor/comm/communicator.h"
#include "model/parallel_config.h"

namespace axo {

struct GridCoords {
  int x = 0, y = 0, z = 0, data = 0, pipeline = 0;
};

// The coordinates of `rank` in `config`'s grid.
GridCoords grid_coords(const ParallelConfig& config, int rank);

class ProcessGrid {
 public:
  // Collective over `world`, which must have config.gpus() ranks (InputError
  // naming both numbers otherwise). `world` must outlive the grid.
  ProcessGrid(Communicator& world, const ParallelConfig& config);

  const ParallelConfig& config() const { return config_; }
  const GridCoords& coords() const { return coords_; }
  Communicator& world() const { return world_; }
  // Ranks differing only in that coordinate, ordered by it.
  Communicator& x() const { return *x_; }
  Communicator& y() const { return *y_; }
  Communicator& z() const { return *z_; }
  Communicator& data() const { return *data_; }
  Communicator& pipeline() const { return *pipeline_; }  // rank i is stage i
  // The X×Y×Z ranks of one stage of one replica: they run the same
  // schedule, so they agree on its order through this group.
  Communicator& tensor() const { return *tensor_; }
  // Ranks differing only in z and data: the parameters that are neither
  // split over Z nor over data (norms, biases, embeddings) sum their
  // gradients here.
  Communicator& z_and_data() const { return *z_and_data_; }
  // Ranks differing only in y, z and data: with sequence parallelism the
  // norms and embeddings see only this rank's rows, so they sum over Y too.
  Communicator& y_z_and_data() const { return *y_z_and_data_; }
  // The first and the last stage of one (data, z, y, x): they share the
  // tied embedding. Null with one stage.
  Communicator* embedding() const { return embedding_.get(); }

  bool first_stage() const { return coords_.pipeline == 0; }
  bool last_stage() const { return coords_.pipeline == config_.pipeline - 1; }

 private:
  Communicator& world_;
  ParallelConfig config_;
  GridCoords coords_;
  std::unique_ptr<Communicator> x_, y_, z_, data_, pipeline_, tensor_, z_and_data_, y_z_and_data_, embedding_;
};

}  // namespace axo
