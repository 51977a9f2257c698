// A stage's time and the slowest stage (see cost_stage.h).
#include "model/cost_stage.h"

namespace axo {

StageTime slowest_stage(const ParallelConfig& c, double layers_per_stage, const LayerCompute& layer,
                        const LayerComm& comm, const StageEndCompute& ends, const StageEndComm& ends_comm) {
  StageTime stage;
  stage.layers = layers_per_stage;
  stage.compute = layers_per_stage * layer.total();
  stage.tp_comm = layers_per_stage * comm.total();
  const double first = ends.first() + ends_comm.first, last = ends.last() + ends_comm.last();
  if (c.pipeline == 1) {
    stage.compute = stage.compute + ends.first() + ends.last();
    stage.tp_comm = stage.tp_comm + ends_comm.first + ends_comm.last();
  } else if (first >= last) {
    stage.compute += ends.first();
    stage.tp_comm += ends_comm.first;
  } else {
    stage.compute += ends.last();
    stage.tp_comm += ends_comm.last();
  }
  return stage;
}

}  // namespace axo
