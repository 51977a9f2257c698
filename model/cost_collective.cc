// Recording one collective (see cost_collective.h).
#include "model/cost_collective.h"

#include <string>

namespace axo {

void record_collective(const CostInputs& in, const CostRecorder& record, const Collective& c,
                       const TimedCollective& timed, double exposed, double count) {
  if (!record.recording()) return;
  CostItem item;
  item.scope = c.scope, item.phase = c.phase, item.kind = CostKind::collective;
  item.name = std::string(to_string(c.op)) + " " + c.what;
  if (c.layer) item.name += std::string(" (") + c.layer + ")";
  if (c.dim == GridDim::data && in.config.context > 1) item.name += " over data x context";
  if (timed.parts > 1) item.name += " in " + std::to_string(int64_t(timed.parts)) + " buckets";
  item.group = c.dim;
  item.group_size = timed.group.size;
  item.ranks_per_node = timed.group.ranks_per_node;
  item.bytes = timed.bytes;
  item.bandwidth_GBps = link_estimate(in.machine, c.op, timed.group, timed.bytes / timed.parts).bus_bandwidth_Bps / 1e9;
  item.seconds = timed.seconds;
  item.exposed = exposed;
  item.per_iteration = count;
  record.add(std::move(item));
}

}  // namespace axo
