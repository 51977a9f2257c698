// The copies an FSDP stack makes around its collectives (see cost_fsdp_copies.h).
#include "model/cost_fsdp_copies.h"

#include "model/memory_model.h"

namespace axo {

FsdpCopyBytes fsdp_copy_bytes(const CostInputs& in, double gathered_bytes) {
  const double e = in.shapes.element_bytes, r = reduced_gradient_bytes(in);
  switch (in.machine.fsdp_copies) {
    case FsdpCopies::none: return {};
    case FsdpCopies::flat_parameter: return {0, 2 * e + (r != e ? e + r : 0) + 2 * r};
    case FsdpCopies::per_parameter: return {2 * gathered_bytes, e + r};
  }
  return {};
}

double fsdp_copy_seconds(const CostInputs& in, const CostRecorder& record, CostScope scope, double elements,
                         int gathers, double element_bytes_gathered) {
  const ParallelConfig& c = in.config;
  const FsdpCopyBytes per_element = fsdp_copy_bytes(in, element_bytes_gathered);
  const bool gathered = c.z > 1, reduced = c.z > 1 || sharded_gradients(c);
  const double gathered_bytes = gathered ? gathers * per_element.after_gather : 0;
  const double reduced_bytes = reduced ? per_element.before_reduce : 0;
  const double bytes = elements * (gathered_bytes + reduced_bytes);
  if (bytes <= 0) return 0;
  const double kernels = (gathered_bytes > 0 ? gathers : 0) + (reduced_bytes > 0 ? 1 : 0);
  return record.memory(scope, CostPhase::backward, "FSDP copies around gathers and reduce-scatter", bytes,
                       memory_op_seconds(in.machine, bytes, kernels));
}

}  // namespace axo
