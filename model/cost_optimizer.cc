// The optimizer step and offload traffic (see cost_optimizer.h).
#include "model/cost_optimizer.h"

#include <algorithm>

namespace axo {

OptimizerStep optimizer_step(const CostInputs& in, const DataParallelStep& dp, const CostRecorder& record) {
  const MachineProfile& machine = in.machine;
  const double params = dp.updated_params, e = in.shapes.element_bytes;
  constexpr CostScope step = CostScope::step;
  OptimizerStep out;
  if (in.config.offload) {
    out.optimizer = params / machine.cpu_optimizer_params_per_s;
    const double down = params * e / (machine.device_to_host_GBps * 1e9);
    const double up = params * e / (machine.host_to_device_GBps * 1e9);
    // The gradients stream to the host bucket by bucket as they are reduced: from the start of
    // the last microbatch's reduction under the backward to its exposed end (not under the
    // parameters' all-gather, which follows the update). So the iteration pays max(exposed
    // reduction, download − window) for both: never more as the reduction speeds up.
    out.offload = record.memory(step, CostPhase::step, "offload: gradients to host, weights back", 2 * params * e,
                                down + up, std::max(0.0, down - dp.window - dp.last_exposed) + up);
    record.memory(step, CostPhase::step, "Adam on the host", 0, out.optimizer);
  } else {
    const double bytes = params * (28 + 4 * e);
    out.optimizer = record.memory(step, CostPhase::step, "Adam on the device", bytes,
                                  memory_op_seconds(machine, bytes, 1));
  }
  return out;
}

}  // namespace axo
