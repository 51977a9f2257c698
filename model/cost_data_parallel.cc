// The data-parallel gradient all-reduce (see cost_data_parallel.h).
#include "model/cost_data_parallel.h"

#include "model/cost_collective.h"
#include "model/memory_model.h"

namespace axo {

namespace {

// The tied embedding's gradient, summed by the first and the last stage.
double tied_embedding_all_reduce(const CostInputs& in, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  if (c.pipeline == 1 || !in.spec.tied_embeddings) return 0;
  const int64_t apart = c.stride(GridDim::pipeline) * (c.pipeline - 1);
  const GroupPlacement pair = place_group(2, apart, in.machine.gpus_per_node);
  const double bytes = double(in.spec.vocab) * double(in.spec.hidden) / double(c.x * c.y * c.z) * in.shapes.element_bytes;
  const double t = collective_seconds(in.machine, CollectiveOp::all_reduce, pair, bytes);
  if (record.recording()) {
    CostItem item;
    item.scope = CostScope::step, item.phase = CostPhase::step, item.kind = CostKind::collective;
    item.name = "all_reduce tied embedding gradient (first and last stage)";
    item.group = GridDim::pipeline;
    item.group_size = 2;
    item.ranks_per_node = pair.ranks_per_node;
    item.bytes = bytes;
    item.seconds = item.exposed = t;
    item.per_iteration = 1;
    record.add(std::move(item));
  }
  return t;
}

}  // namespace

DataParallelStep data_parallel_step(const CostInputs& in, const std::vector<int64_t>& layers, double slowest_layers,
                                    const LayerCompute& layer, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  DataParallelStep dp;
  dp.local_params = double(fullest_stage_params(in.spec, c, layers)) / double(c.x * c.y * c.z);
  const Collective gradients{CostScope::step, CostPhase::step, CollectiveOp::all_reduce, GridDim::data,
                             dp.local_params, in.shapes.element_bytes, "gradients"};
  const TimedCollective timed = time_collective(in, gradients);
  if (timed.seconds > 0) {
    dp.all_reduce = timed.seconds;
    const double n = slowest_layers, backward = n * (layer.backward + layer.recompute);
    const double window = backward * (n - 1) / n;
    dp.exposed = dp.all_reduce - hidden_seconds(in.machine, dp.all_reduce * (n - 1) / n, window);
  }
  if (timed.seconds > 0) record_collective(in, record, gradients, timed, dp.exposed);
  dp.exposed += tied_embedding_all_reduce(in, record);
  return dp;
}

}  // namespace axo
