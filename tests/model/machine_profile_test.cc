// Machine profiles: every preset loads; schema errors are located; round trip.
#include "model/machine_profile.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "model/cost_fp8.h"
#include "model/error.h"
#include "model/presets.h"
#include "model/yaml_fields.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

TEST(MachineProfile, EveryPresetLoads) {
  const auto names = list_presets("machines");
  ASSERT_GE(names.size(), 6u);
  for (const std::string name : {"selene", "perlmutter", "frontier", "alps", "summit", "dgx-h100"}) {
    const MachineProfile m = load_machine(name);
    EXPECT_EQ(m.name, name);
    EXPECT_GT(m.usable_memory_bytes(), 0);
    EXPECT_FALSE(m.source.empty()) << name << " must cite its figures";
  }
}

// Issue: a calibration stopped before it measured anything wrote the schema's floors (peak 1e-9
// TFLOP/s, 1e-6 GB/s), and a 0.1M-parameter model was priced at 5.5 days per step. A partial
// profile without a GEMM or a bandwidth prices nothing; a whole one, or a partial one that
// measured both, prices as before.
TEST(MachineProfile, APartialCalibrationWithoutRatesPricesNothing) {
  MachineProfile m = load_machine("selene");
  EXPECT_EQ(unmeasured_rates_problem(m, "m.yaml"), "");  // a preset: no table, not a calibration
  m.incomplete = "rank 1: gemm did not complete within 3 s";
  EXPECT_EQ(unmeasured_rates_problem(m, "m.yaml"), "");  // its rates are the preset's
  m.peak_tflops_fp32 = kUnmeasuredTflops;
  EXPECT_EQ(unmeasured_rates_problem(m, "m.yaml"),
            "m.yaml is a partial calibration (rank 1: gemm did not complete within 3 s) that measured no GEMM (its "
            "peak_tflops are placeholders): nothing can be priced on it; calibrate again (a longer --timeout, say)");
  EXPECT_NE(precision_problem(Precision::bf16, m, "m.yaml").find("measured no GEMM"), std::string::npos);
  m.hbm_bandwidth_GBps = kUnmeasuredBandwidthGBps;
  EXPECT_NE(unmeasured_rates_problem(m, "m.yaml").find("no GEMM (its peak_tflops are placeholders) and no memory "
                                                       "bandwidth"),
            std::string::npos);
  m.peak_tflops_fp32 = 19.5;
  EXPECT_NE(unmeasured_rates_problem(m, "m.yaml").find("measured no memory bandwidth"), std::string::npos);
  m.hbm_bandwidth_GBps = 1500;
  EXPECT_EQ(unmeasured_rates_problem(m, "m.yaml"), "");
  EXPECT_EQ(precision_problem(Precision::bf16, m, "m.yaml"), "");
  m.peak_tflops_bf16 = kUnmeasuredTflops;  // a GPU calibration that measured fp32 GEMMs only
  EXPECT_NE(precision_problem(Precision::bf16, m, "m.yaml").find("has no bf16 rate"), std::string::npos);
}

TEST(MachineProfile, RoundTripWithFitsAndTable) {
  MachineProfile m = load_machine("selene");
  m.gemm_table.push_back({Precision::bf16, 1024, 2048, 4096, 200.5});
  m.collectives.push_back({CollectiveOp::all_gather, 4, 2, {{65536, 3.5, 10}, {1e18, 20, 80}}});
  YAML::Node extra;
  extra["metadata"]["date"] = "2026-11-22";
  YAML::Emitter out;
  out << to_yaml(m, extra);
  const MachineProfile back = machine_profile_from_yaml(load_yaml_text(out.c_str(), "rt"), "rt");
  EXPECT_EQ(back.name, m.name);
  EXPECT_DOUBLE_EQ(back.peak_tflops_bf16, 312);
  EXPECT_EQ(back.gemm_sm_count, 108);  // A100
  ASSERT_EQ(back.gemm_table.size(), 1u);
  EXPECT_EQ(back.gemm_table[0].n, 2048);
  ASSERT_EQ(back.collectives.size(), 1u);
  EXPECT_EQ(back.collectives[0].op, CollectiveOp::all_gather);
  ASSERT_EQ(back.collectives[0].segments.size(), 2u);
  EXPECT_DOUBLE_EQ(back.collectives[0].segments[1].bus_bandwidth_GBps, 80);
}

TEST(MachineProfile, ErrorsNameFileLineField) {
  const std::string text =
      "name: m\ngpus_per_node: 8\ndevice_memory_GiB: 80\npeak_tflops: {fp32: 10}\n"
      "hbm_bandwidth_GBps: fast\n";
  try {
    machine_profile_from_yaml(load_yaml_text(text, "m.yaml"), "m.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "m.yaml:5:21: field 'hbm_bandwidth_GBps': expected a number, got 'fast'");
  }
}

// `m` written out and read back as file `name`.
MachineProfile reread(const MachineProfile& m, const std::string& name = "m.yaml") {
  YAML::Emitter out;
  out << to_yaml(m, YAML::Node());
  return machine_profile_from_yaml(load_yaml_text(out.c_str(), name), name);
}

// A node of several hosts (GB200's 4-GPU trays in a 64-GPU segment) reads and round-trips;
// hosts that do not make whole nodes are refused with the file, line and both values.
TEST(MachineProfile, HostsDivideANode) {
  YAML::Node node = to_yaml(load_machine("selene"), YAML::Node());  // 8 GPUs per node
  EXPECT_EQ(reread(load_machine("selene")).host_gpus(), 8);          // absent: a node is one host
  node["gpus_per_host"] = 2;
  const MachineProfile two =
      machine_profile_from_yaml(load_yaml_text(YAML::Dump(node).c_str(), "m.yaml"), "m.yaml");
  EXPECT_EQ(two.host_gpus(), 2);
  EXPECT_EQ(reread(two).host_gpus(), 2);
  node["gpus_per_host"] = 3;
  const std::string error = testing::input_error_of(
      [&] { machine_profile_from_yaml(load_yaml_text(YAML::Dump(node).c_str(), "m.yaml"), "m.yaml"); });
  EXPECT_EQ(error.rfind("m.yaml:", 0), 0u) << error;
  EXPECT_NE(error.find("field 'gpus_per_host': 3 does not divide gpus_per_node 8 (a node is whole hosts)"),
            std::string::npos) << error;
}

// A calibration on one node (metadata.ranks / ranks_per_node) measured no network: a plan over more
// GPUs than the node says its inter_node figures are estimates; on its node, or a preset, nothing.
TEST(MachineProfile, OneNodeCalibrationNotesItsEstimatedNetwork) {
  YAML::Node node = to_yaml(load_machine("selene"), YAML::Node());  // 8 GPUs per node
  node["metadata"]["ranks"] = 8;
  node["metadata"]["ranks_per_node"] = 8;
  const MachineProfile one = machine_profile_from_yaml(load_yaml_text(YAML::Dump(node).c_str(), "c.yaml"), "c.yaml");
  EXPECT_EQ(one.calibrated_nodes, 1);
  EXPECT_EQ(one_node_calibration_note(one, "c.yaml", 16),
            "Note: c.yaml was calibrated on one node: its inter_node figures are the intra-node link's, estimated, "
            "and these 16 GPUs span 2 nodes\n");
  EXPECT_EQ(one_node_calibration_note(one, "c.yaml", 8), "");
  node["metadata"]["ranks"] = 16;
  const MachineProfile two = machine_profile_from_yaml(load_yaml_text(YAML::Dump(node).c_str(), "c.yaml"), "c.yaml");
  EXPECT_EQ(two.calibrated_nodes, 2);
  EXPECT_EQ(one_node_calibration_note(two, "c.yaml", 64), "");
  EXPECT_EQ(one_node_calibration_note(load_machine("selene"), "selene", 64), "");  // no calibration's
}

// A GEMM shape sampled twice and two fits of one collective group (hand edits: calibrate
// measures each once) are refused, where the first won silently.
TEST(MachineProfile, DuplicateSamplesAndDuplicateFitsAreRefused) {
  MachineProfile m = load_machine("selene");
  m.gemm_table = {{Precision::bf16, 512, 512, 512, 60}, {Precision::fp32, 512, 512, 512, 9}};
  EXPECT_EQ(reread(m).gemm_table.size(), 2u);  // one shape in two precisions is two samples
  m.gemm_table.push_back({Precision::bf16, 512, 512, 512, 90});
  const std::string twice = testing::input_error_of([&] { reread(m); });
  EXPECT_NE(twice.find("field 'm': bf16 512x512x512 given twice (first at "), std::string::npos) << twice;
  m.gemm_table.clear();
  const CollectiveFit fit{CollectiveOp::all_gather, 4, 2, {{1e18, 20, 80}}};
  m.collectives = {fit, fit};
  EXPECT_NE(testing::input_error_of([&] { reread(m); }).find("a second fit of all_gather over 4 ranks, 2 per node"),
            std::string::npos);
  // A fit of more ranks on a node than the node has fits no group the model prices.
  m.gpus_per_node = 2;
  m.collectives = {fit};
  m.collectives[0].ranks_per_node = 4;
  const std::string error = testing::input_error_of([&] { reread(m); });
  EXPECT_NE(error.find("field 'ranks_per_node': expected a whole number in [1, 2], got 4"), std::string::npos) << error;
}

// The name goes into generated scripts' comments: a line break there would start a shell command.
TEST(MachineProfile, NameWithALineBreakIsRefused) {
  MachineProfile m = load_machine("selene");
  m.name = "sel\nrm -rf x #";
  EXPECT_NE(testing::input_error_of([&] { reread(m); }).find("field 'name': control characters"), std::string::npos);
}

// A measured GEMM faster than the profile's own peak for its precision is not a measurement.
TEST(MachineProfile, GemmSampleAbovePeakIsRefused) {
  MachineProfile m = load_machine("selene");  // bf16 peak 312
  m.gemm_table.push_back({Precision::bf16, 4096, 4096, 4096, 312});
  EXPECT_EQ(reread(m).gemm_table.size(), 1u);
  m.gemm_table[0].tflops = 5000;
  EXPECT_NE(testing::input_error_of([&] { reread(m); }).find("field 'tflops': 5000 is above peak_tflops.bf16 = 312"),
            std::string::npos);
}

// A profile with an fp32 rate alone has no fp16 or bf16 rate (0, refused for those precisions by
// precision_problem), not fp32's; writing it back leaves them out.
TEST(MachineProfile, AbsentHalfPrecisionRatesAreZeroNotFp32s) {
  MachineProfile p = load_machine("selene");
  YAML::Node node = to_yaml(p);
  node["peak_tflops"] = YAML::Load("{fp32: 67}");
  p = machine_profile_from_yaml(node, "m.yaml");
  EXPECT_DOUBLE_EQ(p.peak_tflops(Precision::fp32), 67);
  EXPECT_EQ(p.peak_tflops(Precision::bf16), 0);
  EXPECT_EQ(p.peak_tflops(Precision::fp16), 0);
  const YAML::Node back = to_yaml(p);
  EXPECT_FALSE(back["peak_tflops"]["bf16"].IsDefined());
  EXPECT_EQ(machine_profile_from_yaml(back, "back.yaml").peak_tflops(Precision::bf16), 0);
}

TEST(MachineProfile, SmCountIsAWholeNonNegativeNumber) {
  YAML::Node node = to_yaml(load_machine("dgx-h100"));
  EXPECT_EQ(node["gemm"]["sm_count"].as<int64_t>(), 132);
  node["gemm"]["sm_count"] = 13.5;
  try {
    machine_profile_from_yaml(node, "m.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sm_count"), std::string::npos) << e.what();
  }
  node["gemm"].remove("sm_count");  // CPU profiles: no SMs, no quantization
  EXPECT_EQ(machine_profile_from_yaml(node, "m.yaml").gemm_sm_count, 0);
}

TEST(MachineProfile, OverlapAndSlowdownFactorsAreBounded) {
  const MachineProfile selene = load_machine("selene");
  EXPECT_EQ(selene.overlap_efficiency, 1.0);
  EXPECT_EQ(selene.collective_slowdown, 1.0);
  YAML::Node node = to_yaml(selene);
  node["overlap_efficiency"] = 0.25;
  node["collective_slowdown"] = 2.5;
  const MachineProfile set = machine_profile_from_yaml(node, "m.yaml");
  EXPECT_EQ(set.overlap_efficiency, 0.25);
  EXPECT_EQ(set.collective_slowdown, 2.5);
  node["overlap_efficiency"] = 1.5;
  try {
    machine_profile_from_yaml(node, "m.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("overlap_efficiency"), std::string::npos) << e.what();
  }
}

TEST(MachineProfile, StackAttentionReadsAndRoundTrips) {
  EXPECT_EQ(load_machine("selene").attention, AttentionKind::materialized);  // Megatron-LM 2022
  EXPECT_EQ(load_machine("mosaicml-a100-80").attention, AttentionKind::flash);
  YAML::Node node = to_yaml(load_machine("selene"));
  node["stack"]["attention"] = "flash";
  node["gemm"]["attention_efficiency"] = 0.42;
  YAML::Emitter out;
  out << node;
  const MachineProfile back = machine_profile_from_yaml(load_yaml_text(out.c_str(), "rt"), "rt");
  EXPECT_EQ(back.attention, AttentionKind::flash);
  EXPECT_DOUBLE_EQ(back.attention_efficiency, 0.42);
  node["stack"]["attention"] = "fused";
  try {
    machine_profile_from_yaml(node, "m.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("attention"), std::string::npos) << e.what();
  }
}

// A misspelled key in a stack without its attention is named, not taken for the attention missing.
TEST(MachineProfile, AMisspelledStackKeyIsNamedAsUnknown) {
  YAML::Node node = to_yaml(load_machine("selene"));
  node["stack"] = YAML::Load("{weight_gather: per_block, atention: flash}");
  EXPECT_NE(testing::input_error_of([&] { machine_profile_from_yaml(node, "m.yaml"); }).find("field 'atention': unknown field in the stack"),
            std::string::npos);
  node["stack"] = YAML::Load("{weight_gather: per_block}");
  EXPECT_NE(testing::input_error_of([&] { machine_profile_from_yaml(node, "m.yaml"); }).find("field 'attention': missing"),
            std::string::npos);
  // A bad value is named as such, not a later good key as unknown.
  node["stack"] = YAML::Load("{weight_gather: perblock, grad_reduce: after_backward}");
  EXPECT_NE(testing::input_error_of([&] { machine_profile_from_yaml(node, "m.yaml"); }).find("weight_gather"),
            std::string::npos);
  EXPECT_EQ(testing::input_error_of([&] { machine_profile_from_yaml(node, "m.yaml"); }).find("unknown"),
            std::string::npos);
}

TEST(MachineProfile, WeightGatherAndInterferenceReadAndRoundTrip) {
  const MachineProfile selene = load_machine("selene");
  EXPECT_EQ(selene.weight_gather, WeightGather::per_linear);  // AxoNN's default
  EXPECT_DOUBLE_EQ(selene.overlap_interference, 0.19);        // arXiv 2507.03114's average
  YAML::Node node = to_yaml(selene);
  node["stack"]["weight_gather"] = "per_block";
  node["overlap_interference"] = 0.3;
  YAML::Emitter out;
  out << node;
  const MachineProfile back = machine_profile_from_yaml(load_yaml_text(out.c_str(), "rt"), "rt");
  EXPECT_EQ(back.weight_gather, WeightGather::per_block);
  EXPECT_DOUBLE_EQ(back.overlap_interference, 0.3);
  for (const auto& [key, bad] : {std::pair<std::string, std::string>{"weight_gather", "per_layer"}}) {
    node["stack"][key] = bad;
    try {
      machine_profile_from_yaml(node, "m.yaml");
      FAIL();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  node["stack"]["weight_gather"] = "per_linear";
  node["overlap_interference"] = 1.5;
  EXPECT_THROW(machine_profile_from_yaml(node, "m.yaml"), InputError);
}

// A plan, a model spec or a config.json given as a machine profile is named for what it is, not for a
// missing field.
TEST(MachineProfile, APlanOrAModelSpecIsNamedForWhatItIs) {
  const std::string plan = testing::input_error_of([] {
    machine_profile_from_yaml(load_yaml_text("axo_plan: 1\nmodel: {name: m}\nmachine: selene\n", "plan.yaml"),
                              "plan.yaml");
  });
  EXPECT_EQ(plan, "plan.yaml:1:11: field 'axo_plan': a plan (plan.yaml), not a machine profile: its machine is selene");
  const std::string spec = testing::input_error_of([] {
    machine_profile_from_yaml(load_yaml_text("name: m\nlayers: 4\nhidden: 128\n", "m.yaml"), "m.yaml");
  });
  EXPECT_NE(spec.find("field 'layers': a model spec, not a machine profile"), std::string::npos) << spec;
  const std::string hf = testing::input_error_of([] {
    machine_profile_from_yaml(load_yaml_text("{\"model_type\": \"llama\", \"hidden_size\": 4096}", "config.json"),
                              "config.json");
  });
  EXPECT_NE(hf.find("field 'model_type': a Hugging Face config.json's key"), std::string::npos) << hf;
}

// The low-latency protocol's section reads, round-trips, is absent where a profile has none (a CPU
// calibration writes none back) and refuses a base of zero or an unknown key by name.
TEST(MachineProfile, LowLatencyProtocolReadsAndRoundTrips) {
  const MachineProfile h100 = load_machine("dgx-h100");
  EXPECT_DOUBLE_EQ(h100.low_latency.base_us, 6.6);  // NCCL tuning.cc's ring LL base
  const MachineProfile back = reread(h100);
  EXPECT_DOUBLE_EQ(back.low_latency.base_us, h100.low_latency.base_us);
  EXPECT_DOUBLE_EQ(back.low_latency.intra_step_us, h100.low_latency.intra_step_us);
  EXPECT_DOUBLE_EQ(back.low_latency.tree_inter_step_us, h100.low_latency.tree_inter_step_us);
  EXPECT_DOUBLE_EQ(back.low_latency.net_overhead_us, h100.low_latency.net_overhead_us);
  EXPECT_DOUBLE_EQ(back.low_latency.inter_step_us, h100.low_latency.inter_step_us);
  EXPECT_DOUBLE_EQ(back.low_latency.intra_bus_GBps, h100.low_latency.intra_bus_GBps);
  EXPECT_DOUBLE_EQ(back.low_latency.inter_bus_GBps, h100.low_latency.inter_bus_GBps);
  EXPECT_DOUBLE_EQ(back.low_latency.two_node_bus_GBps, 39.0);  // NCCL's llMaxBws on Intel hosts over two nodes
  YAML::Node one_cap = to_yaml(h100);  // a section written before the two-node cap: one cap across nodes
  one_cap["low_latency"].remove("two_node_bus_GBps");
  EXPECT_DOUBLE_EQ(machine_profile_from_yaml(one_cap, "m.yaml").low_latency.two_node_bus_GBps,
                   h100.low_latency.inter_bus_GBps);
  MachineProfile none = h100;
  none.low_latency = {};
  EXPECT_FALSE(to_yaml(none)["low_latency"]);
  EXPECT_FALSE(reread(none).low_latency.present());
  YAML::Node node = to_yaml(h100);
  node["low_latency"]["base_us"] = 0;
  EXPECT_NE(testing::input_error_of([&] { machine_profile_from_yaml(node, "m.yaml"); }).find("base_us"), std::string::npos);
  node["low_latency"]["base_us"] = 6.6;
  node["low_latency"]["step_us"] = 1;
  EXPECT_NE(testing::input_error_of([&] { machine_profile_from_yaml(node, "m.yaml"); }).find("step_us"), std::string::npos);
}

TEST(MachineProfile, MemoryStackSettingsReadAndRoundTrip) {
  const MachineProfile h100 = load_machine("dgx-h100");
  EXPECT_EQ(h100.fp8_weights, Fp8Weights::cached);  // Megatron-LM's default: TE's weight cache
  EXPECT_EQ(h100.loss, LossKind::fp32_copy);
  EXPECT_EQ(h100.activations, ActivationLayout::korthikanti);  // a preset's stack is Megatron-LM's or NeMo's
  YAML::Node node = to_yaml(h100);
  node["stack"]["fp8_weights"] = "primary";
  node["stack"]["activations"] = "axo";
  node["stack"]["loss"] = "fused";
  node["stack"]["selective"] = "per_op";
  node["stack"]["optimizer_state"] = "bf16";
  YAML::Emitter out;
  out << node;
  const MachineProfile back = machine_profile_from_yaml(load_yaml_text(out.c_str(), "rt"), "rt");
  EXPECT_EQ(back.fp8_weights, Fp8Weights::primary);
  EXPECT_EQ(back.loss, LossKind::fused);
  EXPECT_EQ(back.selective, SelectiveKind::per_op);
  EXPECT_EQ(back.optimizer_state, OptimizerState::bf16);
  EXPECT_EQ(back.activations, ActivationLayout::axo);
  for (Fp8Weights weights : {Fp8Weights::cached, Fp8Weights::transient, Fp8Weights::gathered}) {
    YAML::Node held = YAML::Clone(node);
    held["stack"]["fp8_weights"] = to_string(weights);
    EXPECT_EQ(machine_profile_from_yaml(held, "rt").fp8_weights, weights) << to_string(weights);
  }
  for (const auto& [key, bad] : {std::pair<std::string, std::string>{"fp8_weights", "fp4"},
                                 {"loss", "chunked"},
                                 {"selective", "every_other_layer"},
                                 {"optimizer_state", "fp8"},
                                 {"activations", "llmc"}}) {
    YAML::Node wrong = YAML::Clone(node);
    wrong["stack"][key] = bad;
    try {
      machine_profile_from_yaml(wrong, "m.yaml");
      FAIL() << key;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

TEST(MachineProfile, GB200Nvl72IsOneNvlinkDomain) {
  const MachineProfile gb200 = load_machine("gb200-nvl72");
  EXPECT_EQ(gb200.gpus_per_node, 64);  // a 16-tray segment of one 72-GPU NVLink domain
  EXPECT_EQ(gb200.nics_per_node, gb200.gpus_per_node);  // one NIC per GPU
  EXPECT_EQ(gb200.host_gpus(), 4);                      // a compute tray is one host
  EXPECT_EQ(reread(gb200).host_gpus(), 4);
  EXPECT_DOUBLE_EQ(gb200.peak_tflops(Precision::bf16), 2500);  // 360 PFLOPS sparse / 72 / 2
  EXPECT_DOUBLE_EQ(gb200.peak_tflops(Precision::fp8), 5000);   // 720 PFLOPS sparse / 72 / 2
  EXPECT_DOUBLE_EQ(gb200.hbm_bandwidth_GBps, 8000);            // 576 TB/s / 72
}

// `profile` with stack.`key` set to `bad` is refused with the file and line, the key and its choices.
void expect_bad_stack_choice(const YAML::Node& profile, const char* key, const char* bad, const char* choices) {
  YAML::Node node = YAML::Clone(profile);
  node["stack"][key] = bad;
  try {
    machine_profile_from_yaml(load_yaml_text(YAML::Dump(node).c_str(), "m.yaml"), "m.yaml");
    FAIL() << key;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("m.yaml:"), std::string::npos) << message;  // file and line
    EXPECT_NE(message.find(key), std::string::npos) << message;
    EXPECT_NE(message.find(choices), std::string::npos) << message;
  }
}

TEST(MachineProfile, ElementwiseReadsAndRoundTrips) {
  const MachineProfile selene = load_machine("selene");
  EXPECT_EQ(selene.elementwise, ElementwiseKind::fused);  // Megatron-LM's fused kernels: the default
  YAML::Node node = to_yaml(selene);
  EXPECT_EQ(node["stack"]["elementwise"].as<std::string>(), "fused");
  node["stack"]["elementwise"] = "eager";
  YAML::Emitter out;
  out << node;
  EXPECT_EQ(machine_profile_from_yaml(load_yaml_text(out.c_str(), "rt"), "rt").elementwise, ElementwiseKind::eager);
  EXPECT_EQ(selene.backward_prefetch, BackwardPrefetch::pre);
  node["stack"]["backward_prefetch"] = "post";
  YAML::Emitter again;
  again << node;
  EXPECT_EQ(machine_profile_from_yaml(load_yaml_text(again.c_str(), "rt"), "rt").backward_prefetch,
            BackwardPrefetch::post);
  EXPECT_EQ(selene.tp_collectives, TpCollectives::overlapped);  // Megatron-LM's async dX all-reduce: the default
  EXPECT_EQ(node["stack"]["tp_collectives"].as<std::string>(), "overlapped");
  node["stack"]["tp_collectives"] = "exposed";
  YAML::Emitter third;
  third << node;
  EXPECT_EQ(machine_profile_from_yaml(load_yaml_text(third.c_str(), "rt"), "rt").tp_collectives,
            TpCollectives::exposed);
  expect_bad_stack_choice(node, "tp_collectives", "blocking", "overlapped, exposed");
  node["stack"]["elementwise"] = "unfused";
  try {
    machine_profile_from_yaml(node, "m.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("elementwise"), std::string::npos) << e.what();
  }
}

// stack.`key` set to each of `choices` is read and written back as given.
void expect_stack_choices_round_trip(const char* key, std::initializer_list<const char*> choices) {
  YAML::Node node = to_yaml(load_machine("selene"));
  for (const char* choice : choices) {
    node["stack"][key] = choice;
    const MachineProfile read = machine_profile_from_yaml(load_yaml_text(YAML::Dump(node).c_str(), "rt"), "rt");
    EXPECT_EQ(to_yaml(read)["stack"][key].as<std::string>(), choice) << key;
  }
}

// stack.reduce_dtype: compute (the default), fp32 (torchtitan's FSDP2, Composer's DEFAULT) or
// fp32_copy (axo's executor); stack.activation_comm_dtype: compute (the default) or fp32 (axo's
// executor).
TEST(MachineProfile, CommunicationDtypesReadAndRoundTrip) {
  const MachineProfile selene = load_machine("selene");
  EXPECT_EQ(selene.reduce_dtype, ReduceDtype::compute);
  EXPECT_EQ(selene.activation_comm_dtype, ActivationCommDtype::compute);
  YAML::Node node = to_yaml(selene);
  EXPECT_EQ(node["stack"]["reduce_dtype"].as<std::string>(), "compute");
  node["stack"]["reduce_dtype"] = "fp32";
  EXPECT_EQ(machine_profile_from_yaml(load_yaml_text(YAML::Dump(node).c_str(), "rt"), "rt").reduce_dtype,
            ReduceDtype::fp32);
  expect_bad_stack_choice(node, "reduce_dtype", "fp16", "compute, fp32, fp32_copy");
  expect_bad_stack_choice(node, "activation_comm_dtype", "bf16", "compute, fp32");
  expect_stack_choices_round_trip("reduce_dtype", {"compute", "fp32", "fp32_copy"});
  expect_stack_choices_round_trip("activation_comm_dtype", {"compute", "fp32"});
}

// stack.fsdp_copies: none (the default), flat_parameter (FSDP1) or per_parameter (FSDP2);
// stack.grad_reduce: overlapped (the default) or after_backward (selene's Megatron-LM).
TEST(MachineProfile, FsdpCopiesAndGradReduceReadAndRoundTrip) {
  const MachineProfile selene = load_machine("selene");
  EXPECT_EQ(selene.fsdp_copies, FsdpCopies::none);
  EXPECT_EQ(selene.grad_reduce, GradReduce::after_backward);
  EXPECT_EQ(load_machine("dgx-h100").grad_reduce, GradReduce::overlapped);
  EXPECT_EQ(load_machine("dgx-h100").grad_buckets, GradBuckets::megatron_core);
  expect_stack_choices_round_trip("fsdp_copies", {"none", "flat_parameter", "per_parameter"});
  expect_stack_choices_round_trip("grad_reduce", {"overlapped", "after_backward"});
  expect_stack_choices_round_trip("grad_buckets", {"per_layer", "megatron_core", "pytorch_ddp"});
  expect_stack_choices_round_trip("grad_accumulation", {"fused", "separate"});
  expect_bad_stack_choice(to_yaml(selene), "grad_accumulation", "later", "fused, separate");
  EXPECT_EQ(selene.grad_accumulation, GradAccumulation::fused);
  expect_bad_stack_choice(to_yaml(selene), "fsdp_copies", "fsdp3", "none, flat_parameter, per_parameter");
  expect_bad_stack_choice(to_yaml(selene), "grad_reduce", "never", "overlapped, after_backward");
  expect_bad_stack_choice(to_yaml(selene), "grad_buckets", "one", "per_layer, megatron_core, pytorch_ddp");
  EXPECT_EQ(selene.grad_buckets, GradBuckets::per_layer);
}

// stack.fp8_amax: stage (the default: Transformer Engine under Megatron-Core, NeMo, llm-foundry) or
// tensor (torchao's dynamic scaling).
TEST(MachineProfile, Fp8AmaxReadsAndRoundTrips) {
  EXPECT_EQ(load_machine("dgx-h100").fp8_amax, Fp8Amax::stage);
  expect_stack_choices_round_trip("fp8_amax", {"stage", "tensor"});
  expect_bad_stack_choice(to_yaml(load_machine("dgx-h100")), "fp8_amax", "world", "stage, tensor");
}

TEST(MachineProfile, FailureAndCheckpointFields) {
  const MachineProfile frontier = load_machine("frontier");
  EXPECT_DOUBLE_EQ(frontier.failures_per_gpu_hour, 1.973e-5);
  EXPECT_DOUBLE_EQ(frontier.checkpoint_filesystem_GBps, 4600);
  EXPECT_DOUBLE_EQ(frontier.restart_s, 600);
  // A profile without them (an older calibrate output) takes the defaults.
  YAML::Node node = to_yaml(frontier);
  node.remove("failures_per_gpu_hour");
  node.remove("checkpoint_filesystem_GBps");
  const MachineProfile defaults = machine_profile_from_yaml(node, "m.yaml");
  EXPECT_DOUBLE_EQ(defaults.failures_per_gpu_hour, kLlama3FailuresPerGpuHour);
  EXPECT_DOUBLE_EQ(defaults.checkpoint_filesystem_GBps, 2000);
  const std::string text =
      "name: m\ngpus_per_node: 8\ndevice_memory_GiB: 80\npeak_tflops: {fp32: 10}\n"
      "hbm_bandwidth_GBps: 100\ngemm: {max_efficiency: 0.5}\n"
      "intra_node: {alpha_us: 1, bus_bandwidth_GBps: 10}\n"
      "inter_node: {alpha_us: 1, nics_per_node: 1, nic_bandwidth_GBps: 10}\n"
      "host_link: {host_to_device_GBps: 10, device_to_host_GBps: 10}\n"
      "cpu_optimizer_params_per_s: 1e9\nrestart_s: -5\n";
  try {
    machine_profile_from_yaml(load_yaml_text(text, "m.yaml"), "m.yaml");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("m.yaml:11:", 0), 0u) << message;
    EXPECT_NE(message.find("field 'restart_s'"), std::string::npos) << message;
  }
}

TEST(Presets, UnknownPresetListsTheKnownOnes) {
  try {
    load_machine("selenium");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'selenium' is neither a file nor a machine preset"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("selene"), std::string::npos);
  }
  EXPECT_THROW(load_model("gpt-7"), InputError);
}

// A path that is no file is not looked up among the presets (./selene blamed the preset's name).
TEST(Presets, AMissingPathIsNoSuchFile) {
  for (const char* path : {"./selene", "../models/gpt2-mini"}) {
    EXPECT_EQ(testing::input_error_of([&] { load_machine(path); }),
              "'" + std::string(path) + "': no such file (a preset is named without a folder)");
  }
}

TEST(Presets, EveryModelPresetLoadsAndCitesItsSource) {
  const auto names = list_presets("models");
  ASSERT_GE(names.size(), 20u);
  for (const std::string& name : names) {
    const TransformerSpec spec = load_model(name);
    EXPECT_FALSE(spec.source.empty()) << name;
    EXPECT_GT(spec.parameter_count(), 0) << name;
  }
}

}  // namespace
}  // namespace axo
