// The seventh step of the cost model: the optimizer step, on the device or,
// with offload, on the host (ARCHITECTURE.md, "CPU offload").
//
// On the device, the mixed-precision Adam step as Megatron-LM runs it moves
// 28 + 4e bytes per parameter: gradient norm and overflow check (read the
// gradient twice), Adam (read the gradient, read and write the fp32 master
// and both moments), copy to the low-precision weight (read the master,
// write the weight). With offload it runs on the host at the profile's
// cpu_optimizer_params_per_s; gradients go down (hidden behind the gradient
// all-reduce as far as it lasts) and weights come back up. With ZeRO the
// rank updates (and offloads) only its 1/data shard of the parameters.
#pragma once

#include "model/cost_data_parallel.h"

namespace axo {

struct OptimizerStep {
  double optimizer = 0;  // the Adam step
  double offload = 0;    // exposed host<->device traffic
};

OptimizerStep optimizer_step(const CostInputs& in, const DataParallelStep& dp, const CostRecorder& record);

}  // namespace axo
