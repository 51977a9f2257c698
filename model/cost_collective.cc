// Recording one collective (see cost_collective.h).
#include "model/cost_collective.h"

#include <string>

#include "model/cost_fp8.h"

namespace axo {

namespace {

// " over data x context", " over z x context x data": a group of several of `c`'s dimensions
// larger than 1 named by them, `dim` first; "" for one.
std::string group_suffix(const ParallelConfig& c, GridDims dims, GridDim dim) {
  std::string names = c.size(dim) > 1 ? group_name(dim) : "";
  int spanned = c.size(dim) > 1 ? 1 : 0;
  for (int d = 0; d < kGridDims; ++d) {
    if (GridDim(d) == dim || !has_dim(dims, GridDim(d)) || c.size(GridDim(d)) == 1) continue;
    names += std::string(names.empty() ? "" : " x ") + group_name(GridDim(d));
    ++spanned;
  }
  return spanned > 1 ? " over " + names : "";
}

}  // namespace

std::vector<GridDims> priced_groups(const TransformerSpec& spec, const MachineProfile& machine) {
  std::vector<GridDims> groups = pair_groups();
  if (prices_stage_group(spec, machine)) groups.push_back(kStageDims);
  if (keeps_whole_over_z(machine)) {
    using D = GridDim;
    groups.push_back(grid_dims({D::z, D::context, D::data}));
    groups.push_back(grid_dims({D::y, D::z, D::context, D::data}));
    groups.push_back(grid_dims({D::y, D::z}));
  }
  return groups;
}

void record_collective(const CostInputs& in, const CostRecorder& record, const Collective& c,
                       const TimedCollective& timed, double exposed, double count) {
  if (!record.recording()) return;
  CostItem item;
  item.scope = c.scope, item.phase = c.phase, item.kind = CostKind::collective;
  item.name = std::string(to_string(c.op)) + " " + c.what;
  if (c.layer) item.name += std::string(" (") + c.layer + ")";
  item.name += group_suffix(in.config, collective_dims(c.dim, c.also), c.dim);
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
