// MachineProfile: YAML schema, validation and output.
#include "model/machine_profile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "model/error.h"
#include "model/yaml_fields.h"

namespace axo {

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all_reduce";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::broadcast: return "broadcast";
    case CollectiveOp::send_recv: return "send_recv";
  }
  return "?";
}

CollectiveOp parse_collective_op(const std::string& text, const std::string& where) {
  for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather,
                          CollectiveOp::reduce_scatter, CollectiveOp::broadcast,
                          CollectiveOp::send_recv}) {
    if (text == to_string(op)) return op;
  }
  throw InputError(where + ": unknown collective '" + text +
                   "' (expected all_reduce, all_gather, reduce_scatter, broadcast, send_recv)");
}

const char* to_string(AttentionKind kind) {
  return kind == AttentionKind::flash3 ? "flash3" : kind == AttentionKind::flash ? "flash" : "materialized";
}

const char* to_string(WeightGather gather) {
  return gather == WeightGather::per_block ? "per_block" : "per_linear";
}

const char* to_string(Fp8Weights weights) {
  switch (weights) {
    case Fp8Weights::cached: return "cached";
    case Fp8Weights::primary: return "primary";
    case Fp8Weights::transient: return "transient";
    case Fp8Weights::gathered: return "gathered";
  }
  return "cached";
}

const char* to_string(Fp8Casts casts) { return casts == Fp8Casts::separate ? "separate" : "fused"; }

const char* to_string(Fp8Amax amax) { return amax == Fp8Amax::tensor ? "tensor" : "stage"; }

const char* to_string(LossKind loss) { return loss == LossKind::fused ? "fused" : "fp32_copy"; }

const char* to_string(ActivationLayout layout) { return layout == ActivationLayout::axo ? "axo" : "korthikanti"; }

Fp8Weights parse_fp8_weights(const YamlMap& map) {
  const std::string text = map.get_choice("fp8_weights", {"cached", "primary", "transient", "gathered"});
  for (Fp8Weights weights : {Fp8Weights::primary, Fp8Weights::transient, Fp8Weights::gathered}) {
    if (text == to_string(weights)) return weights;
  }
  return Fp8Weights::cached;
}

Fp8Casts parse_fp8_casts(const YamlMap& map) {
  return map.get_choice("fp8_casts", {"fused", "separate"}) == "separate" ? Fp8Casts::separate : Fp8Casts::fused;
}

Fp8Amax parse_fp8_amax(const YamlMap& map) {
  return map.get_choice("fp8_amax", {"stage", "tensor"}) == "tensor" ? Fp8Amax::tensor : Fp8Amax::stage;
}

LossKind parse_loss_kind(const YamlMap& map) {
  return map.get_choice("loss", {"fp32_copy", "fused"}) == "fused" ? LossKind::fused : LossKind::fp32_copy;
}

const char* to_string(SelectiveKind kind) { return kind == SelectiveKind::per_op ? "per_op" : "attention"; }

const char* to_string(OptimizerState state) { return state == OptimizerState::bf16 ? "bf16" : "fp32"; }

SelectiveKind parse_selective_kind(const YamlMap& map) {
  return map.get_choice("selective", {"attention", "per_op"}) == "per_op" ? SelectiveKind::per_op
                                                                           : SelectiveKind::attention;
}

OptimizerState parse_optimizer_state(const YamlMap& map) {
  return map.get_choice("optimizer_state", {"fp32", "bf16"}) == "bf16" ? OptimizerState::bf16 : OptimizerState::fp32;
}
const char* to_string(BackwardPrefetch prefetch) { return prefetch == BackwardPrefetch::post ? "post" : "pre"; }

const char* to_string(ElementwiseKind kind) { return kind == ElementwiseKind::eager ? "eager" : "fused"; }

ElementwiseKind parse_elementwise_kind(const YamlMap& map) {
  return map.get_choice("elementwise", {"fused", "eager"}) == "eager" ? ElementwiseKind::eager : ElementwiseKind::fused;
}

BackwardPrefetch parse_backward_prefetch(const YamlMap& map) {
  return map.get_choice("backward_prefetch", {"pre", "post"}) == "post" ? BackwardPrefetch::post : BackwardPrefetch::pre;
}

const char* to_string(TpCollectives collectives) {
  return collectives == TpCollectives::exposed ? "exposed" : "overlapped";
}

TpCollectives parse_tp_collectives(const YamlMap& map) {
  return map.get_choice("tp_collectives", {"overlapped", "exposed"}) == "exposed" ? TpCollectives::exposed
                                                                                  : TpCollectives::overlapped;
}

const char* to_string(ReduceDtype dtype) {
  switch (dtype) {
    case ReduceDtype::compute: return "compute";
    case ReduceDtype::fp32: return "fp32";
    case ReduceDtype::fp32_copy: return "fp32_copy";
  }
  return "compute";
}

ReduceDtype parse_reduce_dtype(const YamlMap& map) {
  const std::string dtype = map.get_choice("reduce_dtype", {"compute", "fp32", "fp32_copy"});
  return dtype == "fp32" ? ReduceDtype::fp32 : dtype == "fp32_copy" ? ReduceDtype::fp32_copy : ReduceDtype::compute;
}

const char* to_string(ActivationCommDtype dtype) { return dtype == ActivationCommDtype::fp32 ? "fp32" : "compute"; }

ActivationCommDtype parse_activation_comm_dtype(const YamlMap& map) {
  return map.get_choice("activation_comm_dtype", {"compute", "fp32"}) == "fp32" ? ActivationCommDtype::fp32
                                                                                 : ActivationCommDtype::compute;
}

const char* to_string(FsdpCopies copies) {
  switch (copies) {
    case FsdpCopies::none: return "none";
    case FsdpCopies::flat_parameter: return "flat_parameter";
    case FsdpCopies::per_parameter: return "per_parameter";
  }
  return "none";
}

FsdpCopies parse_fsdp_copies(const YamlMap& map) {
  const std::string text = map.get_choice("fsdp_copies", {"none", "flat_parameter", "per_parameter"});
  if (text == "flat_parameter") return FsdpCopies::flat_parameter;
  return text == "per_parameter" ? FsdpCopies::per_parameter : FsdpCopies::none;
}

const char* to_string(GradReduce reduce) { return reduce == GradReduce::after_backward ? "after_backward" : "overlapped"; }

const char* to_string(GradBuckets buckets) {
  switch (buckets) {
    case GradBuckets::megatron_core: return "megatron_core";
    case GradBuckets::pytorch_ddp: return "pytorch_ddp";
    default: return "per_layer";
  }
}

GradBuckets parse_grad_buckets(const YamlMap& map) {
  const std::string choice = map.get_choice("grad_buckets", {"per_layer", "megatron_core", "pytorch_ddp"});
  if (choice == "megatron_core") return GradBuckets::megatron_core;
  return choice == "pytorch_ddp" ? GradBuckets::pytorch_ddp : GradBuckets::per_layer;
}

const char* to_string(GradAccumulation accumulation) {
  return accumulation == GradAccumulation::separate ? "separate" : "fused";
}

GradAccumulation parse_grad_accumulation(const YamlMap& map) {
  return map.get_choice("grad_accumulation", {"fused", "separate"}) == "separate" ? GradAccumulation::separate
                                                                                  : GradAccumulation::fused;
}

GradReduce parse_grad_reduce(const YamlMap& map) {
  return map.get_choice("grad_reduce", {"overlapped", "after_backward"}) == "after_backward" ? GradReduce::after_backward
                                                                                            : GradReduce::overlapped;
}

namespace {

// The stack's optional keys over their defaults, each read (and so known to reject_unknown_keys).
StackSettings read_optional_stack_settings(const YamlMap& map) {
  StackSettings s;
  if (map.has("weight_gather")) {
    s.weight_gather = map.get_choice("weight_gather", {"per_linear", "per_block"}) == "per_block"
                          ? WeightGather::per_block
                          : WeightGather::per_linear;
  }
  if (map.has("fp8_weights")) s.fp8_weights = parse_fp8_weights(map);
  if (map.has("fp8_casts")) s.fp8_casts = parse_fp8_casts(map);
  if (map.has("fp8_amax")) s.fp8_amax = parse_fp8_amax(map);
  if (map.has("loss")) s.loss = parse_loss_kind(map);
  if (map.has("selective")) s.selective = parse_selective_kind(map);
  if (map.has("optimizer_state")) s.optimizer_state = parse_optimizer_state(map);
  if (map.has("elementwise")) s.elementwise = parse_elementwise_kind(map);
  if (map.has("backward_prefetch")) s.backward_prefetch = parse_backward_prefetch(map);
  if (map.has("tp_collectives")) s.tp_collectives = parse_tp_collectives(map);
  if (map.has("reduce_dtype")) s.reduce_dtype = parse_reduce_dtype(map);
  if (map.has("activation_comm_dtype")) s.activation_comm_dtype = parse_activation_comm_dtype(map);
  if (map.has("fsdp_copies")) s.fsdp_copies = parse_fsdp_copies(map);
  if (map.has("grad_reduce")) s.grad_reduce = parse_grad_reduce(map);
  if (map.has("grad_buckets")) s.grad_buckets = parse_grad_buckets(map);
  if (map.has("grad_accumulation")) s.grad_accumulation = parse_grad_accumulation(map);
  if (map.has("activations")) {
    s.activations = map.get_choice("activations", {"korthikanti", "axo"}) == "axo" ? ActivationLayout::axo
                                                                                   : ActivationLayout::korthikanti;
  }
  return s;
}

}  // namespace

StackSettings read_stack_settings(const YamlMap& map, const std::string& source) {
  StackSettings s = read_optional_stack_settings(map);
  s.attention = parse_attention(map, source);
  return s;
}

std::optional<StackSettings> read_stack_section(const YamlMap& map, const std::string& source) {
  if (!map.has("stack")) return std::nullopt;
  const YamlMap stack(map.get_node("stack"), source, "stack");
  // The optional keys first (a bad value named as such), then an unknown key, before the one
  // required key: a misspelled "atention" is named as unknown, not as the attention missing.
  StackSettings settings = read_optional_stack_settings(stack);
  stack.reject_unknown_keys({"attention"});
  settings.attention = parse_attention(stack, source);
  return settings;
}

AttentionKind parse_attention(const YamlMap& map, const std::string& source) {
  return parse_attention_kind(map.get_choice("attention", {"flash", "flash3", "materialized"}), source);
}

AttentionKind parse_attention_kind(const std::string& text, const std::string& where) {
  if (text == "flash") return AttentionKind::flash;
  if (text == "flash3") return AttentionKind::flash3;
  if (text == "materialized") return AttentionKind::materialized;
  throw InputError(where + ": unknown attention '" + text + "' (expected flash, flash3 or materialized)");
}

double MachineProfile::peak_tflops(Precision precision) const {
  switch (precision) {
    case Precision::fp32: return peak_tflops_fp32;
    case Precision::fp16: return peak_tflops_fp16;
    case Precision::bf16: return peak_tflops_bf16;
    case Precision::fp8: return peak_tflops_fp8;
  }
  return 0;
}

double MachineProfile::usable_memory_bytes() const {
  return (device_memory_GiB - reserved_memory_GiB) * double(1ull << 30);
}

namespace {

constexpr double kHuge = 1e12;

Precision parse_precision(const YamlMap& map) {
  const std::string p = map.get_choice("precision", {"fp32", "fp16", "bf16"});
  return p == "fp32" ? Precision::fp32 : p == "fp16" ? Precision::fp16 : Precision::bf16;
}

// The measured GEMMs; a rate above the profile's peak for its precision is not a measurement.
std::vector<GemmSample> read_gemm_table(const YAML::Node& table, const std::string& source,
                                        const MachineProfile& profile) {
  if (!table.IsSequence()) throw InputError(where(table, source) + ": gemm table: expected a list");
  std::vector<GemmSample> samples;
  std::vector<std::string> places;  // where each sample is, for a shape given twice
  for (const YAML::Node& entry : table) {
    const YamlMap map(entry, source, "gemm table entry");
    GemmSample s;
    s.precision = parse_precision(map);
    s.m = map.get_int("m", 1, int64_t(1) << 40);
    s.n = map.get_int("n", 1, int64_t(1) << 40);
    s.k = map.get_int("k", 1, int64_t(1) << 40);
    s.tflops = map.get_double("tflops", 1e-9, 1e6);
    const double peak = profile.peak_tflops(s.precision);
    if (peak > 0 && s.tflops > peak) {
      std::ostringstream why;
      why << s.tflops << " is above peak_tflops." << to_string(s.precision) << " = " << peak;
      map.fail("tflops", why.str());
    }
    map.reject_unknown_keys();
    // A shape given twice: pricing would take one silently (calibrate measures each once).
    const auto same = [&](const GemmSample& t) {
      return t.precision == s.precision && t.m == s.m && t.n == s.n && t.k == s.k;
    };
    if (const auto first = std::find_if(samples.begin(), samples.end(), same); first != samples.end()) {
      map.fail("m", std::string(to_string(s.precision)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                        std::to_string(s.k) + " given twice (first at " + places[size_t(first - samples.begin())] +
                        "): keep the one sample pricing should take");
    }
    samples.push_back(s);
    places.push_back(where(entry, source));
  }
  return samples;
}

// The `low_latency` section: latencies in microseconds, the base above zero (a protocol that costs
// nothing would price every small collective free), bandwidths in GB/s.
static LowLatencyProtocol read_low_latency(const YAML::Node& node, const std::string& source) {
  const YamlMap map(node, source, "low_latency protocol");
  LowLatencyProtocol ll;
  ll.base_us = map.get_double("base_us", 1e-3, 1e6);
  ll.intra_step_us = map.get_double("intra_step_us", 0, 1e6);
  ll.inter_step_us = map.get_double("inter_step_us", 0, 1e6);
  ll.tree_inter_step_us = map.get_double("tree_inter_step_us", 0, 1e6);
  ll.net_overhead_us = map.get_double("net_overhead_us", 0, 1e6);
  ll.intra_bus_GBps = map.get_double("intra_bus_GBps", 1e-9, 1e9);
  ll.inter_bus_GBps = map.get_double("inter_bus_GBps", 1e-9, 1e9);
  // A profile written before the two-node cap had one cap across nodes.
  ll.two_node_bus_GBps = map.get_double("two_node_bus_GBps", 1e-9, 1e9, ll.inter_bus_GBps);
  map.reject_unknown_keys();
  return ll;
}

static YAML::Node low_latency_yaml(const LowLatencyProtocol& ll) {
  YAML::Node node;
  node["base_us"] = ll.base_us;
  node["intra_step_us"] = ll.intra_step_us;
  node["inter_step_us"] = ll.inter_step_us;
  node["tree_inter_step_us"] = ll.tree_inter_step_us;
  node["net_overhead_us"] = ll.net_overhead_us;
  node["intra_bus_GBps"] = ll.intra_bus_GBps;
  node["two_node_bus_GBps"] = ll.two_node_bus_GBps;
  node["inter_bus_GBps"] = ll.inter_bus_GBps;
  node.SetStyle(YAML::EmitterStyle::Flow);
  return node;
}

// Fits of groups of at most `gpus_per_node` ranks on a node (calibrate's, or a hand edit's).
std::vector<CollectiveFit> read_collectives(const YAML::Node& list, const std::string& source,
                                            int64_t gpus_per_node) {
  if (!list.IsSequence()) throw InputError(where(list, source) + ": collectives: expected a list");
  std::vector<CollectiveFit> fits;
  for (const YAML::Node& entry : list) {
    const YamlMap map(entry, source, "collective fit");
    CollectiveFit fit;
    fit.op = parse_collective_op(map.get_string("op"), where(map.get_node("op"), source));
    fit.group_size = map.get_int("group_size", 1, int64_t(1) << 30);
    fit.ranks_per_node = map.get_int("ranks_per_node", 1, std::min(fit.group_size, gpus_per_node));
    const YAML::Node segments = map.get_node("segments");
    if (!segments.IsSequence() || segments.size() == 0) {
      map.fail("segments", "expected a non-empty list of {max_bytes, alpha_us, bus_bandwidth_GBps}");
    }
    for (const YAML::Node& s : segments) {
      const YamlMap seg(s, source, "collective segment");
      LinkSegment piece;
      piece.max_bytes = seg.has("max_bytes") ? seg.get_double("max_bytes", 1, 1e18) : kHuge * 1e6;
      piece.alpha_us = seg.get_double("alpha_us", 0, 1e9);
      piece.bus_bandwidth_GBps = seg.get_double("bus_bandwidth_GBps", 1e-9, 1e9);
      seg.reject_unknown_keys();
      if (!fit.segments.empty() && piece.max_bytes <= fit.segments.back().max_bytes) {
        seg.fail("max_bytes", "segments must be in increasing max_bytes order");
      }
      fit.segments.push_back(piece);
    }
    map.reject_unknown_keys({"measured"});
    for (const CollectiveFit& earlier : fits) {  // the first would win silently
      if (earlier.op == fit.op && earlier.group_size == fit.group_size && earlier.ranks_per_node == fit.ranks_per_node) {
        map.fail("op", "a second fit of " + std::string(to_string(fit.op)) + " over " + std::to_string(fit.group_size) +
                           " ranks, " + std::to_string(fit.ranks_per_node) + " per node: give each group once");
      }
    }
    fits.push_back(fit);
  }
  return fits;
}

// metadata.ranks / metadata.ranks_per_node, calibrate's record; 0 where either is absent or not a count.
int64_t calibrated_nodes(const std::string& ranks, const std::string& ranks_per_node) {
  try {
    const int64_t all = std::stoll(ranks), per_node = std::stoll(ranks_per_node);
    return all > 0 && per_node > 0 && all % per_node == 0 ? all / per_node : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

// A plan, a model spec or a config.json given where a profile goes is named for what it is (it had
// been refused for a missing 'name' or 'gpus_per_node').
static void refuse_other_file_kinds(const YamlMap& map) {
  if (map.has("axo_plan")) {
    const YAML::Node machine = map.node()["machine"];
    const std::string named = machine && machine.IsScalar() ? ": its machine is " + machine.Scalar() : "";
    map.fail("axo_plan", "a plan (plan.yaml), not a machine profile" + named);
  }
  if (map.has("gpus_per_node")) return;
  if (map.has("layers") && map.has("hidden")) {
    map.fail("layers", "a model spec, not a machine profile (one of configs/machines/, or what axo calibrate writes)");
  }
  if (map.has("model_type")) map.fail("model_type", "a Hugging Face config.json's key: a model, not a machine profile");
}

MachineProfile machine_profile_from_yaml(const YAML::Node& node, const std::string& source) {
  const YamlMap map(node, source, "machine profile");
  refuse_other_file_kinds(map);
  MachineProfile p;
  p.name = map.get_string("name");
  if (!is_one_printable_line(p.name)) map.fail("name", kNotOnePrintableLine);
  p.source = map.get_string("source", "");
  p.backend = map.get_choice("backend", {"gpu", "cpu"}, "gpu");
  p.gpu_type = map.get_string("gpu_type", "");
  p.gpus_per_node = map.get_int("gpus_per_node", 1, 1 << 16);
  p.gpus_per_host = map.get_int("gpus_per_host", 1, p.gpus_per_node, 0);
  if (p.gpus_per_host > 0 && p.gpus_per_node % p.gpus_per_host != 0) {
    map.fail("gpus_per_host", std::to_string(p.gpus_per_host) + " does not divide gpus_per_node " +
                                  std::to_string(p.gpus_per_node) + " (a node is whole hosts)");
  }
  p.device_memory_GiB = map.get_double("device_memory_GiB", 1e-3, 1e6);
  p.reserved_memory_GiB = map.get_double("reserved_memory_GiB", 0, p.device_memory_GiB, 0);
  const YamlMap peak(map.get_node("peak_tflops"), source, "peak_tflops");
  p.peak_tflops_fp32 = peak.get_double("fp32", kUnmeasuredTflops, 1e7);
  // Optional, 0 when absent: a model in a precision the profile has no rate for is refused
  // (precision_problem), never priced at another precision's rate.
  p.peak_tflops_fp16 = peak.get_double("fp16", 1e-9, 1e7, 0);
  p.peak_tflops_bf16 = peak.get_double("bf16", 1e-9, 1e7, 0);
  p.peak_tflops_fp8 = peak.get_double("fp8", 1e-9, 1e7, 0);  // most devices have none
  peak.reject_unknown_keys();
  p.hbm_bandwidth_GBps = map.get_double("hbm_bandwidth_GBps", kUnmeasuredBandwidthGBps, 1e8);
  p.memory_bound_efficiency = map.get_double("memory_bound_efficiency", 1e-3, 1, 0.7);
  p.kernel_launch_us = map.get_double("kernel_launch_us", 0, 1e6, 5);
  p.overlap_efficiency = map.get_double("overlap_efficiency", 0, 1, 1.0);
  p.overlap_interference = map.get_double("overlap_interference", 0, 0.9, 0);
  p.collective_slowdown = map.get_double("collective_slowdown", 1e-3, 1e3, 1.0);

  const YamlMap gemm(map.get_node("gemm"), source, "gemm");
  p.gemm_max_efficiency = gemm.get_double("max_efficiency", 1e-3, 1);
  p.gemm_half_efficiency_dim = gemm.get_double("half_efficiency_dim", 0, 1e6, 32);
  p.gemm_sm_count = gemm.get_int("sm_count", 0, 100000, 0);
  p.attention_efficiency = gemm.get_double("attention_efficiency", 1e-3, 1, 0.5);
  p.flash3_speedup = gemm.get_double("flash3_speedup", 1, 10, 1.0);
  if (gemm.has("table")) p.gemm_table = read_gemm_table(gemm.get_node("table"), source, p);
  gemm.reject_unknown_keys();

  if (const auto stack = read_stack_section(map, source)) static_cast<StackSettings&>(p) = *stack;

  const YamlMap intra(map.get_node("intra_node"), source, "intra_node link");
  p.intra_alpha_us = intra.get_double("alpha_us", 0, 1e9);
  p.intra_bus_bandwidth_GBps = intra.get_double("bus_bandwidth_GBps", 1e-9, 1e9);
  p.intra_pair_bandwidth_GBps = intra.get_double("pair_bandwidth_GBps", 1e-9, 1e9, 0);
  intra.reject_unknown_keys();

  const YamlMap inter(map.get_node("inter_node"), source, "inter_node link");
  p.inter_alpha_us = inter.get_double("alpha_us", 0, 1e9);
  p.nics_per_node = inter.get_int("nics_per_node", 1, 1024);
  p.nic_bandwidth_GBps = inter.get_double("nic_bandwidth_GBps", 1e-9, 1e9);
  inter.reject_unknown_keys();
  if (map.has("low_latency")) p.low_latency = read_low_latency(map.get_node("low_latency"), source);

  const YamlMap host(map.get_node("host_link"), source, "host_link");
  p.host_to_device_GBps = host.get_double("host_to_device_GBps", 1e-9, 1e9);
  p.device_to_host_GBps = host.get_double("device_to_host_GBps", 1e-9, 1e9);
  host.reject_unknown_keys();

  p.cpu_optimizer_params_per_s = map.get_double("cpu_optimizer_params_per_s", 1, 1e15);
  if (map.has("collectives")) p.collectives = read_collectives(map.get_node("collectives"), source, p.gpus_per_node);
  p.failures_per_gpu_hour =
      map.get_double("failures_per_gpu_hour", 1e-12, 1, kLlama3FailuresPerGpuHour);
  p.checkpoint_filesystem_GBps = map.get_double("checkpoint_filesystem_GBps", 1e-6, 1e9, 2000);
  p.restart_s = map.get_double("restart_s", 0, 1e7, 600);
  map.reject_unknown_keys({"metadata", "raw"});  // calibrate's record: only metadata.complete is read
  const YAML::Node metadata = map.has("metadata") ? map.get_node("metadata") : YAML::Node();
  const auto scalar = [&](const char* key) -> std::string {  // "" where absent or not a scalar
    if (!metadata.IsMap() || !metadata[key] || !metadata[key].IsScalar()) return "";
    return metadata[key].Scalar();
  };
  if (scalar("complete") == "false") p.incomplete = scalar("error").empty() ? "metadata.complete: false" : scalar("error");
  p.calibrated_nodes = calibrated_nodes(scalar("ranks"), scalar("ranks_per_node"));
  return p;
}

std::string one_node_calibration_note(const MachineProfile& profile, const std::string& path, int64_t gpus) {
  if (profile.calibrated_nodes != 1 || gpus <= profile.gpus_per_node) return "";
  return "Note: " + path + " was calibrated on one node: its inter_node figures are the intra-node link's, " +
         "estimated, and these " + std::to_string(gpus) + " GPUs span " +
         std::to_string((gpus + profile.gpus_per_node - 1) / profile.gpus_per_node) + " nodes\n";
}

std::string partial_calibration_note(const MachineProfile& profile, const std::string& path) {
  if (profile.incomplete.empty()) return "";
  return "Note: " + path + " is a partial calibration (" + profile.incomplete +
         "): what it did not measure is estimated\n";
}

std::string unmeasured_rates_problem(const MachineProfile& profile, const std::string& path) {
  if (profile.incomplete.empty()) return "";
  std::string unmeasured;
  if (profile.peak_tflops_fp32 <= kUnmeasuredTflops) unmeasured = "no GEMM (its peak_tflops are placeholders)";
  if (profile.hbm_bandwidth_GBps <= kUnmeasuredBandwidthGBps) {
    unmeasured += std::string(unmeasured.empty() ? "" : " and ") + "no memory bandwidth (hbm_bandwidth_GBps is a placeholder)";
  }
  if (unmeasured.empty()) return "";
  return path + " is a partial calibration (" + profile.incomplete + ") that measured " + unmeasured +
         ": nothing can be priced on it; calibrate again (a longer --timeout, say)";
}

MachineProfile load_machine_profile(const std::string& path) {
  return machine_profile_from_yaml(load_yaml_file(path), path);
}

YAML::Node to_yaml(const MachineProfile& p, const YAML::Node& extra) {
  YAML::Node node;
  node["name"] = p.name;
  if (!p.source.empty()) node["source"] = p.source;
  node["backend"] = p.backend;
  if (!p.gpu_type.empty()) node["gpu_type"] = p.gpu_type;
  node["gpus_per_node"] = p.gpus_per_node;
  if (p.gpus_per_host > 0) node["gpus_per_host"] = p.gpus_per_host;
  node["device_memory_GiB"] = p.device_memory_GiB;
  node["reserved_memory_GiB"] = p.reserved_memory_GiB;
  node["peak_tflops"]["fp32"] = p.peak_tflops_fp32;
  if (p.peak_tflops_fp16 > 0) node["peak_tflops"]["fp16"] = p.peak_tflops_fp16;
  if (p.peak_tflops_bf16 > 0) node["peak_tflops"]["bf16"] = p.peak_tflops_bf16;
  if (p.peak_tflops_fp8 > 0) node["peak_tflops"]["fp8"] = p.peak_tflops_fp8;
  node["hbm_bandwidth_GBps"] = p.hbm_bandwidth_GBps;
  node["memory_bound_efficiency"] = p.memory_bound_efficiency;
  node["kernel_launch_us"] = p.kernel_launch_us;
  node["overlap_efficiency"] = p.overlap_efficiency;
  node["overlap_interference"] = p.overlap_interference;
  node["collective_slowdown"] = p.collective_slowdown;
  node["gemm"]["max_efficiency"] = p.gemm_max_efficiency;
  node["gemm"]["half_efficiency_dim"] = p.gemm_half_efficiency_dim;
  if (p.gemm_sm_count > 0) node["gemm"]["sm_count"] = p.gemm_sm_count;
  node["gemm"]["attention_efficiency"] = p.attention_efficiency;
  node["gemm"]["flash3_speedup"] = p.flash3_speedup;
  for (const GemmSample& s : p.gemm_table) {
    YAML::Node e;
    e["precision"] = to_string(s.precision);
    e["m"] = s.m;
    e["n"] = s.n;
    e["k"] = s.k;
    e["tflops"] = s.tflops;
    e.SetStyle(YAML::EmitterStyle::Flow);
    node["gemm"]["table"].push_back(e);
  }
  node["stack"]["attention"] = to_string(p.attention);
  node["stack"]["weight_gather"] = to_string(p.weight_gather);
  node["stack"]["fp8_weights"] = to_string(p.fp8_weights);
  node["stack"]["fp8_casts"] = to_string(p.fp8_casts);
  node["stack"]["fp8_amax"] = to_string(p.fp8_amax);
  node["stack"]["loss"] = to_string(p.loss);
  node["stack"]["selective"] = to_string(p.selective);
  node["stack"]["optimizer_state"] = to_string(p.optimizer_state);
  node["stack"]["elementwise"] = to_string(p.elementwise);
  node["stack"]["backward_prefetch"] = to_string(p.backward_prefetch);
  node["stack"]["tp_collectives"] = to_string(p.tp_collectives);
  node["stack"]["reduce_dtype"] = to_string(p.reduce_dtype);
  node["stack"]["activation_comm_dtype"] = to_string(p.activation_comm_dtype);
  node["stack"]["fsdp_copies"] = to_string(p.fsdp_copies);
  node["stack"]["grad_reduce"] = to_string(p.grad_reduce);
  node["stack"]["grad_buckets"] = to_string(p.grad_buckets);
  node["stack"]["activations"] = to_string(p.activations);
  node["stack"]["grad_accumulation"] = to_string(p.grad_accumulation);
  node["intra_node"]["alpha_us"] = p.intra_alpha_us;
  node["intra_node"]["bus_bandwidth_GBps"] = p.intra_bus_bandwidth_GBps;
  if (p.intra_pair_bandwidth_GBps > 0) node["intra_node"]["pair_bandwidth_GBps"] = p.intra_pair_bandwidth_GBps;
  node["inter_node"]["alpha_us"] = p.inter_alpha_us;
  node["inter_node"]["nics_per_node"] = p.nics_per_node;
  node["inter_node"]["nic_bandwidth_GBps"] = p.nic_bandwidth_GBps;
  if (p.low_latency.present()) node["low_latency"] = low_latency_yaml(p.low_latency);
  node["host_link"]["host_to_device_GBps"] = p.host_to_device_GBps;
  node["host_link"]["device_to_host_GBps"] = p.device_to_host_GBps;
  node["cpu_optimizer_params_per_s"] = p.cpu_optimizer_params_per_s;
  node["failures_per_gpu_hour"] = p.failures_per_gpu_hour;
  node["checkpoint_filesystem_GBps"] = p.checkpoint_filesystem_GBps;
  node["restart_s"] = p.restart_s;
  for (const CollectiveFit& fit : p.collectives) {
    YAML::Node e;
    e["op"] = to_string(fit.op);
    e["group_size"] = fit.group_size;
    e["ranks_per_node"] = fit.ranks_per_node;
    for (size_t i = 0; i < fit.segments.size(); ++i) {
      YAML::Node s;
      if (i + 1 < fit.segments.size()) s["max_bytes"] = fit.segments[i].max_bytes;
      s["alpha_us"] = fit.segments[i].alpha_us;
      s["bus_bandwidth_GBps"] = fit.segments[i].bus_bandwidth_GBps;
      s.SetStyle(YAML::EmitterStyle::Flow);
      e["segments"].push_back(s);
    }
    node["collectives"].push_back(e);
  }
  if (extra.IsMap()) {
    for (const auto& entry : extra) node[entry.first.as<std::string>()] = entry.second;
  }
  return node;
}

}  // namespace axo
