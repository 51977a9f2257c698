// Each stage's time and the slowest stage (see cost_stage.h).
#include "model/cost_stage.h"

namespace axo {

StageTime stage_time(const std::vector<int64_t>& stage_layers, int64_t stage, const StageParts& parts) {
  StageTime t;
  t.stage = stage;
  t.layers = double(stage_layers[size_t(stage)]);
  t.recomputed = parts.recomputed.empty() ? t.layers : double(parts.recomputed[size_t(stage)]);
  t.compute = t.recomputed * parts.layer.total();
  t.tp_comm = t.recomputed * parts.comm.total();
  if (t.recomputed < t.layers) {
    t.compute += (t.layers - t.recomputed) * parts.kept->total();
    t.tp_comm += (t.layers - t.recomputed) * parts.kept_comm->total();
  }
  if (stage == 0) {
    t.compute += parts.ends.first();
    t.tp_comm += parts.ends_comm.first;
  }
  if (stage == int64_t(stage_layers.size()) - 1) {
    t.compute += parts.ends.last();
    t.tp_comm += parts.ends_comm.last();
  }
  return t;
}

StageTime slowest_stage(const std::vector<int64_t>& stage_layers, const StageParts& parts) {
  StageTime slowest = stage_time(stage_layers, 0, parts);
  for (int64_t s = 1; s < int64_t(stage_layers.size()); ++s) {
    const StageTime t = stage_time(stage_layers, s, parts);
    if (t.total() > slowest.total()) slowest = t;
  }
  return slowest;
}

}  // namespace axo
