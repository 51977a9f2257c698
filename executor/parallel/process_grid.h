// The process grid of a plan: where this rank sits in
// Gpipe × Gdata × Gcontext × Gz × Gy × Gx and the communicators of the groups it
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
  int context = 0;  // which pair of sequence chunks the rank holds (context_chunks.h)
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
  // The ring of ring attention: rank i holds sequence chunks i and 2c−1−i.
  Communicator& context() const { return *context_; }
  // The X×Y×Z×context ranks of one stage of one replica: they run the same
  // schedule (the context ranks meet in every attention), so they agree on
  // its order through this group.
  Communicator& tensor() const { return *tensor_; }
  // Every rank of this rank's pipeline stage, over all replicas (its X×Y×Z×context×data ranks):
  // under zero 2 with interleaved chunks they run the schedule in one order
  // (pipeline_schedule.h).
  Communicator& stage() const { return *stage_; }
  // Ranks differing only in data and context: they hold the same linear
  // shards and compute their gradients on other tokens, so sum them here.
  Communicator& data_and_context() const { return *data_and_context_; }
  // Ranks differing only in z, context and data: the parameters that are
  // neither split over Z nor over data (norms, biases, embeddings) sum
  // their gradients here.
  Communicator& z_and_data() const { return *z_and_data_; }
  // Ranks differing only in y, z, context and data: with sequence
  // parallelism the norms and embeddings see only this rank's rows, so they
  // sum over Y too.
  Communicator& y_z_and_data() const { return *y_z_and_data_; }
  // Ranks differing only in y and z: the Y × Z part of y_z_and_data (the
  // sharded optimizer sums it before reduce-scattering over data × context).
  Communicator& y_and_z() const { return *y_and_z_; }
  // The first and the last stage of one (data, z, y, x): they share the
  // tied embedding. Null with one stage.
  Communicator* embedding() const { return embedding_.get(); }

  bool first_stage() const { return coords_.pipeline == 0; }
  bool last_stage() const { return coords_.pipeline == config_.pipeline - 1; }

 private:
  Communicator& world_;
  ParallelConfig config_;
  GridCoords coords_;
  std::unique_ptr<Communicator> x_, y_, z_, context_, data_, pipeline_, tensor_, stage_, data_and_context_, z_and_data_,
      y_z_and_data_, y_and_z_, embedding_;
};

}  // namespace axo
