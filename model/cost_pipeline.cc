// The pipeline's bubble and point-to-point traffic (see cost_pipeline.h).
#include "model/cost_pipeline.h"

namespace axo {

double pipeline_bubble(const ParallelConfig& c, const StageTime& slowest) {
  return c.pipeline > 1 ? double(c.pipeline - 1) / double(c.interleave) * slowest.total() : 0;
}

double pipeline_p2p(const CostInputs& in, double m, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  if (c.pipeline == 1) return 0;
  const int64_t gpn = in.machine.gpus_per_node;
  const GroupPlacement pipe = place_group(c.pipeline, c.stride(GridDim::pipeline), gpn, c.gpus());
  const GroupPlacement pair = neighbour_pair(pipe);
  const double activation = in.shapes.tokens * in.shapes.hidden_local * activation_comm_bytes(in);
  const double bytes = activation / double(c.y);
  const double count = 2 * (double(c.interleave) * m + double(c.pipeline - 1));
  const double send = collective_seconds(in.machine, CollectiveOp::send_recv, pair, bytes);
  const double gather = c.sequence_parallel ? 0
                                            : collective_seconds(in.machine, CollectiveOp::all_gather,
                                                                 place_group(c.y, c.stride(GridDim::y), gpn, c.gpus()), activation);
  if (record.recording()) {
    CostItem item;
    item.scope = CostScope::step, item.phase = CostPhase::forward_backward, item.kind = CostKind::p2p;
    item.name = gather > 0 ? "send/recv 1/y of activations and gradients, all-gather over y"
                           : "send/recv activations and gradients";
    item.group = GridDim::pipeline;
    item.group_size = 2;
    item.ranks_per_node = pair.ranks_per_node;
    item.bytes = bytes;
    item.bandwidth_GBps = link_estimate(in.machine, CollectiveOp::send_recv, pair, bytes).bus_bandwidth_Bps / 1e9;
    item.seconds = item.exposed = send + gather;
    item.per_iteration = count;
    record.add(std::move(item));
  }
  return count * (send + gather);
}

}  // namespace axo
