// Text and JSON explanations of one configuration (see explain.h).
#include "planner/explain.h"

#include <optional>

#include "model/byte_size.h"
#include "model/config_fields.h"
#include "model/memory_model.h"
#include "planner/format.h"

namespace axo {

namespace {

std::string human_bytes(double bytes) { return bytes <= 0 ? "-" : format_bytes(bytes); }

}  // namespace

std::string explain_text(const CostModel& model, const ParallelConfig& c) {
  std::vector<CostItem> items;
  const Breakdown b = model.explain(c, items);
  std::string out = "Configuration: " + config_text(c, " ") + "\n";
  if (c.zero > 0 && zero_shards(c) == 1) {
    out += "zero=" + std::to_string(c.zero) +
           " with data=1 and context=1 changes nothing: there is no data group to shard over\n";
  }
  if (model.spec().precision == Precision::fp8) {
    const MachineProfile& machine = model.machine();
    out += format("Precision fp8: the linear layers' GEMMs at %.0f TFLOP/s peak (bf16: %.0f) on bf16 tensors; "
                  "listed: their fp8 casts, amax all-reduces and weight casts; weights include the fp8 copies\n",
                  machine.peak_tflops_fp8, machine.peak_tflops_bf16);
  }
  out += format("Microbatches per iteration: %lld; layers per stage: %s\n\n", (long long)model.microbatches(c),
                model.pipeline_split(c).text().c_str());
  out += format("%-12s %-10s %-11s %-52s %-9s %11s %12s %11s %11s %10s\n", "scope", "phase", "kind",
                "what", "group", "size", "rate", "once (ms)", "exposed", "per iter");
  std::optional<CostScope> last_scope;
  for (const CostItem& item : items) {
    if (last_scope && item.scope != *last_scope) out += "\n";
    last_scope = item.scope;
    std::string group = "-";
    if (item.group) {
      group = format("%s:%lld/%lld", group_name(*item.group), (long long)item.group_size,
                     (long long)item.ranks_per_node);
    }
    const std::string rate = item.kind == CostKind::gemm ? format("%.1f TF/s", item.bandwidth_GBps)
                             : item.bandwidth_GBps > 0 ? format("%.1f GB/s", item.bandwidth_GBps)
                                                       : std::string("-");
    out += format("%-12s %-10s %-11s %-52s %-9s %11s %12s %11.4f %11.4f %10.0f\n", to_string(item.scope),
                  to_string(item.phase), to_string(item.kind), item.name.c_str(), group.c_str(),
                  human_bytes(item.bytes).c_str(), rate.c_str(), item.seconds * 1e3,
                  item.exposed * 1e3, item.per_iteration);
  }
  out += "\n(group = dimension:ranks/ranks sharing a node; rate = achieved TFLOP/s or bus GB/s)\n";
  if (c.pipeline > 1) {
    out += "(pipelined: layer rows count the slowest stage's layers; first- and last-stage rows are those\n"
           " stages' own, in the breakdown where that stage is the slowest; the bubble, (p - 1)/v of the\n"
           " slowest stage's time, is in the breakdown, not a row)\n";
  }
  out += "\n";
  out += "Iteration breakdown (s):\n";
  const auto values = components(b);
  for (size_t i = 0; i < values.size(); ++i) {
    out += format("  %-10s %10.4f  (%5.1f%%)\n", kComponentNames[i], values[i],
                  100 * values[i] / b.iter_time);
  }
  out += format("  %-10s %10.4f\n", "total", b.iter_time);
  // Model FLOPs as Narayanan et al. (SC'21) and Megatron-LM's MFU count them (transformer_spec.h): attention's whole
  // s x s scores and context, where a causal kernel computes about half of them (cost_attention.h prices that half).
  out += format("Model TFLOP/s per GPU: %.1f (%.1f%% of peak; attention counted over the whole s x s, as MFU tables count "
                "it, where a causal kernel computes about half)\n",
                b.tflops_per_gpu, b.pct_peak);
  constexpr double GiB = double(1ull << 30);
  out += format(
      "Memory per GPU (GiB): weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f, "
      "buffers %.2f; total %.2f of %.2f usable: %s\n",
      b.memory.weights / GiB, b.memory.gradients / GiB, b.memory.optimizer / GiB,
      b.memory.activations / GiB, b.memory.comm_buffers / GiB, b.memory.total() / GiB,
      b.memory_capacity / GiB, b.fits ? "fits" : "does NOT fit");
  return out;
}

nlohmann::ordered_json explain_json(const CostModel& model, const ParallelConfig& config) {
  std::vector<CostItem> items;
  model.explain(config, items);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CostItem& item : items) {
    nlohmann::ordered_json j;
    j["scope"] = to_string(item.scope);
    j["phase"] = to_string(item.phase);
    j["kind"] = to_string(item.kind);
    j["name"] = item.name;
    if (item.group) {
      j["group"] = group_name(*item.group);
      j["group_size"] = item.group_size;
      j["ranks_per_node"] = item.ranks_per_node;
    }
    j["bytes"] = item.bytes;
    j["flops"] = item.flops;
    j[item.kind == CostKind::gemm ? "tflops" : "bus_bandwidth_GBps"] = item.bandwidth_GBps;
    j["seconds"] = item.seconds;
    j["exposed_seconds"] = item.exposed;
    j["per_iteration"] = item.per_iteration;
    list.push_back(j);
  }
  return list;
}

std::string band_explain_text(double iter_time_s, const PredictionBand& band) {
  if (!band.band) return "Error band: " + band.no_band + "\n";
  const auto [low, high] = band_limits(*band.band, iter_time_s);
  return format("Error band: predicted %.4f s, expected %.4f to %.4f s (%s)\n", iter_time_s, low, high,
                band_text(*band.band).c_str());
}

}  // namespace axo
