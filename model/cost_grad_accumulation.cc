// Separate gradient accumulation (see cost_grad_accumulation.h).
#include "model/cost_grad_accumulation.h"

namespace axo {

double grad_accumulation_seconds(const CostInputs& in, const CostRecorder& record, CostScope scope,
                                 double elements) {
  if (in.machine.grad_accumulation != GradAccumulation::separate) return 0;
  const double held = elements / double(in.config.z);  // Z reduce-scatters each microbatch's gradients
  // Read the microbatch's gradient, read and write the buffer in the dtype it is held in.
  const double e = in.shapes.element_bytes;
  const double bytes = held * (e + 2 * held_gradient_bytes(in.machine.reduce_dtype, e));
  return record.memory(scope, CostPhase::backward, "gradient accumulation (main_grad += grad)", bytes,
                       memory_op_seconds(in.machine, bytes, 1));
}

}  // namespace axo
