// The copies an FSDP stack makes through HBM around its weight all-gathers and gradient
// reduce-scatters every microbatch (stack.fsdp_copies, model/machine_profile.h): memory-bound
// kernels outside the GEMMs and collectives, on the compute stream or beside it, which the
// collectives' own time does not include. Per weight element of an FSDP unit (e = the model's
// element bytes, r = the reduce dtype's, stack.reduce_dtype):
//
//   flat_parameter (PyTorch FSDP1, torch/distributed/fsdp/_runtime_utils.py):
//     before the reduce-scatter  2e      autograd's SplitWithSizesBackward concatenates the
//                                        parameters' gradients into the FlatParameter's gradient
//                                        (its views were split off it in forward)
//                              + e + r   _post_backward_hook casts it to the reduce dtype (r ≠ e)
//                              + 2r      _reduce_grad's _div_if_needed pre-divides it by the
//                                        gradient_predivide_factor (> 1 from 2 ranks on)
//     after an all-gather        0       it gathers into the FlatParameter the views read
//   per_parameter (FSDP2, torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py):
//     after each all-gather      2g      foreach_all_gather_copy_out: split_with_sizes_copy from
//                                        the gather buffer into each parameter, in the gathered
//                                        bytes g (e, or 1 for weights gathered in fp8)
//     before the reduce-scatter  e + r   foreach_reduce_scatter_copy_in into the reduce-scatter
//                                        buffer in the reduce dtype (fp32 and bf16 divide in
//                                        NCCL's average: no pre-divide kernel)
//
// FSDP1's cast and pre-divide run on its post-backward stream, beside the backward GEMMs:
// priced in series all the same, since a memory-bound kernel's CTAs take the SMs the GEMMs use.
// A microbatch gathers a block twice (forward, and again for backward after resharding) and the
// LM head once (FSDP keeps the root and torchtitan the output unsharded after forward), and an
// untied token embedding once (its own unit; a tied one is the head's).
#pragma once

#include "model/cost_item.h"
#include "model/cost_shapes.h"

namespace axo {

struct FsdpCopyBytes {
  double after_gather = 0;   // per weight element, after each all-gather
  double before_reduce = 0;  // per weight element, before the gradient reduce-scatter
};
// For a unit whose weights are gathered in `gathered_bytes` an element (e, or
// fp8's 1 for a block gathered in fp8: cost_fp8.h's gathered_weight_bytes).
FsdpCopyBytes fsdp_copy_bytes(const CostInputs& in, double gathered_bytes);

// Records and returns the seconds of one microbatch's copies for an FSDP unit of `elements`
// weight elements per (x, y) rank, gathered `gathers` times in `gathered_bytes` an element
// when its weights are Z-sharded (z > 1), its gradients reduce-scattered when z > 1 or
// zero = 2 shards them over data × context.
double fsdp_copy_seconds(const CostInputs& in, const CostRecorder& record, CostScope scope, double elements,
                         int gathers, double element_bytes_gathered);

}  // namespace axo
