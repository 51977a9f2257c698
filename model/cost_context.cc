// Ring attention over the context group (see cost_context.h).
#include "model/cost_context.h"

#include <string>

namespace axo {

namespace {

struct RingPass {
  CostPhase phase;
  double bytes_per_hop;
  double compute;  // the attention compute of the whole pass, split over c blocks
  const char* what;
};

// The exposed seconds of one pass around the ring, recorded as one item.
double ring_pass(const CostInputs& in, const RingPass& pass, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  const GroupPlacement ring =
      place_group(c.context, c.stride(GridDim::context), in.machine.gpus_per_node, c.gpus());
  const double hops = double(c.context - 1);
  const GroupPlacement pair = neighbour_pair(ring);  // the slowest hop's
  const double hop = collective_seconds(in.machine, CollectiveOp::send_recv, pair, pass.bytes_per_hop);
  const LinkEstimate link = link_estimate(in.machine, CollectiveOp::send_recv, pair, pass.bytes_per_hop);
  const double block = pass.compute / double(c.context);
  const double first_latency = in.machine.collective_slowdown * link.alpha_s;
  const double exposed = first_latency + hops * (hop - hidden_seconds(in.machine, hop, block));
  if (record.recording()) {
    CostItem item;
    item.scope = CostScope::layer, item.phase = pass.phase, item.kind = CostKind::p2p;
    item.name = "ring attention: " + std::to_string(c.context - 1) + " hops of " + pass.what;
    item.group = GridDim::context;
    item.group_size = ring.size;
    item.ranks_per_node = ring.ranks_per_node;
    item.bytes = pass.bytes_per_hop;
    item.bandwidth_GBps = link.bus_bandwidth_Bps / 1e9;
    item.seconds = hops * hop;
    item.exposed = exposed;
    item.per_iteration = 1;
    record.add(std::move(item));
  }
  return exposed;
}

}  // namespace

double ring_hop_bytes(const CostInputs& in) {
  const ParallelConfig& c = in.config;
  const double sequences = double(c.microbatch / c.z);
  const double kv_width = double(in.spec.kv_heads / c.y) * in.shapes.head_dim;
  return 2 * sequences * in.shapes.query_seq * kv_width * activation_comm_bytes(in);
}

bool recompute_runs_attention(const CostInputs& in) {
  return in.config.recompute == Recompute::full ||
         (in.config.recompute == Recompute::selective && in.machine.selective == SelectiveKind::attention);
}

RingWindows ring_windows(const CostInputs& in, const LayerCompute& layer) {
  if (in.config.context == 1) return {};
  return {layer.attention_forward, recompute_runs_attention(in) ? layer.attention_forward : 0,
          layer.attention_backward};
}

RingAttention ring_attention(const CostInputs& in, const LayerCompute& layer, const CostRecorder& record) {
  RingAttention ring;
  if (in.config.context == 1) return ring;
  const double bytes = ring_hop_bytes(in);
  const RingWindows windows = ring_windows(in, layer);
  ring.forward = ring_pass(in, {CostPhase::forward, bytes, windows.forward, "key/value blocks"}, record);
  if (windows.recompute > 0) {
    ring.recompute = ring_pass(in, {CostPhase::recompute, bytes, windows.recompute, "key/value blocks"}, record);
  }
  ring.backward = ring_pass(
      in, {CostPhase::backward, 2 * bytes, windows.backward, "key/value blocks and their gradients"}, record);
  return ring;
}

}  // namespace axo
