// Explanation items and their recorder (see cost_item.h).
#include "model/cost_item.h"

namespace axo {

const char* to_string(CostScope scope) {
  static constexpr const char* names[] = {"layer", "first stage", "last stage", "step"};
  return names[static_cast<int>(scope)];
}

const char* to_string(CostPhase phase) {
  static constexpr const char* names[] = {"forward", "backward", "recompute", "step", "forward+backward"};
  return names[static_cast<int>(phase)];
}

const char* to_string(CostKind kind) {
  static constexpr const char* names[] = {"gemm", "memory", "collective", "p2p"};
  return names[static_cast<int>(kind)];
}

const char* group_name(GridDim dim) {
  static constexpr const char* names[] = {"x", "y", "z", "context", "data", "pipeline"};
  return names[static_cast<int>(dim)];
}

double CostRecorder::runs(CostScope scope, CostPhase phase) const {
  switch (scope) {
    case CostScope::layer: return phase == CostPhase::recompute ? recompute_runs_ : layer_runs_;
    case CostScope::first_stage:
    case CostScope::last_stage: return microbatches_;
    case CostScope::step: return 1;
  }
  return 1;
}

void CostRecorder::add(CostItem item) const {
  if (!items_) return;
  item.per_iteration *= runs(item.scope, item.phase);
  items_->push_back(std::move(item));
}

namespace {

// An item run once per microbatch (step: per iteration), all of its `seconds` exposed.
CostItem exposed_item(CostScope scope, CostPhase phase, CostKind kind, std::string name, double seconds) {
  CostItem item;
  item.scope = scope, item.phase = phase, item.kind = kind;
  item.name = std::move(name);
  item.seconds = item.exposed = seconds;
  item.per_iteration = 1;
  return item;
}

}  // namespace

double CostRecorder::gemm(CostScope scope, CostPhase phase, const std::string& name, double m, double n,
                          double k, double seconds, int gemms) const {
  if (!items_) return seconds;
  CostItem item = exposed_item(scope, phase, CostKind::gemm,
                               name + " [" + std::to_string(int64_t(m)) + "x" + std::to_string(int64_t(n)) + "x" +
                                   std::to_string(int64_t(k)) + "]",
                               seconds);
  item.flops = gemms * 2 * m * n * k;
  item.bandwidth_GBps = item.flops / seconds / 1e12;
  add(std::move(item));
  return seconds;
}

double CostRecorder::memory(CostScope scope, CostPhase phase, const std::string& name, double bytes,
                            double seconds) const {
  return memory(scope, phase, name, bytes, seconds, seconds);
}

double CostRecorder::memory(CostScope scope, CostPhase phase, const std::string& name, double bytes,
                            double seconds, double exposed) const {
  if (!items_) return exposed;
  CostItem item = exposed_item(scope, phase, CostKind::memory, name, seconds);
  item.exposed = exposed;
  item.bytes = bytes;
  item.bandwidth_GBps = bytes / seconds / 1e9;
  add(std::move(item));
  return exposed;
}

double CostRecorder::exposed_collective(CostScope scope, CostPhase phase, const std::string& name, GridDim group,
                                        int64_t group_size, int64_t ranks_per_node, double bytes,
                                        double seconds) const {
  if (!items_) return seconds;
  CostItem item = exposed_item(scope, phase, CostKind::collective, name, seconds);
  item.group = group;
  item.group_size = group_size;
  item.ranks_per_node = ranks_per_node;
  item.bytes = bytes;
  add(std::move(item));
  return seconds;
}

}  // namespace axo
