// plan.yaml reading and writing (see plan_file.h).
#include "model/plan_file.h"

#include <fstream>

#include "model/atomic_file.h"
#include "model/config_fields.h"
#include "model/cost_model.h"
#include "model/error.h"
#include "model/stage_partition.h"
#include "model/yaml_fields.h"

namespace axo {

namespace {

// The layers each stage runs, as plan.yaml writes them; empty where the model has fewer layers than
// chunks (no split: check() refuses such a plan).
std::string split_text(const Plan& plan) {
  const ParallelConfig& c = plan.config;
  if (c.pipeline * c.interleave > plan.model.layers) return "";
  return split_pipeline(plan.model, c.pipeline, c.interleave).text();
}

}  // namespace

void write_plan_file(const Plan& plan, const std::string& path) {
  YAML::Node root;
  root["axo_plan"] = 1;
  root["model"] = to_yaml(plan.model);
  root["machine"] = plan.machine;
  root["gpus"] = plan.gpus;
  root["config"] = to_yaml(plan.config);
  YAML::Node predicted;
  const Breakdown& b = plan.predicted;
  predicted["iter_time_s"] = b.iter_time;
  if (plan.iter_time_high_s > 0) {
    predicted["iter_time_low_s"] = plan.iter_time_low_s;
    predicted["iter_time_high_s"] = plan.iter_time_high_s;
  }
  if (!plan.band.empty()) predicted["band"] = plan.band;
  predicted["tflops_per_gpu"] = b.tflops_per_gpu;
  predicted["pct_peak"] = b.pct_peak;
  const auto values = components(b);
  for (size_t i = 0; i < values.size(); ++i) predicted["components_s"][kComponentNames[i]] = values[i];
  constexpr double GiB = double(1ull << 30);
  predicted["memory_GiB"]["weights"] = b.memory.weights / GiB;
  predicted["memory_GiB"]["gradients"] = b.memory.gradients / GiB;
  predicted["memory_GiB"]["optimizer"] = b.memory.optimizer / GiB;
  predicted["memory_GiB"]["activations"] = b.memory.activations / GiB;
  predicted["memory_GiB"]["comm_buffers"] = b.memory.comm_buffers / GiB;
  predicted["memory_GiB"]["total"] = b.memory.total() / GiB;
  predicted["memory_GiB"]["capacity"] = b.memory_capacity / GiB;
  predicted["fits"] = b.fits;
  // The layers each stage runs ("6,6,...,5": stage_partition.h); for the reader, checked on reading.
  if (const std::string split = split_text(plan); !split.empty()) predicted["pipeline_split"] = split;
  root["predicted"] = predicted;
  YAML::Emitter out;
  out << root;
  write_file_atomically(path, std::string(out.c_str()) + "\n");
}

namespace {

// `pipeline_split` is written for the reader; a plan whose text says another split than the one
// axo trains and prices (stage_partition.h) would mislead whoever edited it: refused.
void check_pipeline_split(const YamlMap& predicted, const Plan& plan) {
  if (!predicted.has("pipeline_split")) return;
  const std::string text = predicted.get_string("pipeline_split"), split = split_text(plan);
  if (text != split) {
    predicted.fail("pipeline_split", "'" + text + "' is not the split axo runs for this plan (" + split +
                                         "): it is written for the reader; axo splits the layers itself");
  }
}

// The band's limits, both or neither, low to high (a GPU type whose runs all ran slower than
// predicted has a band above the prediction); its text.
void read_band(const YamlMap& predicted, Plan& plan) {
  if (predicted.has("iter_time_low_s") || predicted.has("iter_time_high_s")) {
    plan.iter_time_low_s = predicted.get_double("iter_time_low_s", 0, kMostIterationSeconds);
    plan.iter_time_high_s = predicted.get_double("iter_time_high_s", plan.iter_time_low_s, kMostIterationSeconds);
  }
  if (predicted.has("band")) plan.band = predicted.get_string("band");
}

}  // namespace

Plan read_plan_file(const std::string& path) { return plan_from_yaml(load_yaml_file(path), path); }

Plan plan_from_yaml(const YAML::Node& root, const std::string& path) {
  const YamlMap map(root, path, "plan");
  if (map.get_int("axo_plan", 1, 1) != 1) map.fail("axo_plan", "unsupported plan version");
  Plan plan;
  plan.model = transformer_spec_from_yaml(map.get_node("model"), path);
  validate(plan.model, path);
  plan.machine = map.get_string("machine");
  plan.gpus = map.get_int("gpus", 1, kLargestCount);
  plan.config = parallel_config_from_yaml(map.get_node("config"), path);
  if (plan.config.gpus() != plan.gpus) {
    map.fail("config", "pipeline*data*context*z*y*x = " + std::to_string(plan.config.gpus()) +
                           " does not equal gpus = " + std::to_string(plan.gpus));
  }
  // A configuration the model can be built with, as --fix and the search check it (check() reads
  // the model alone): a hand-edited sequence_parallel with y=1 trained a model that never learned.
  if (const std::string why = CostModel(plan.model, MachineProfile{}).check(plan.config); !why.empty()) {
    map.fail("config", why);
  }
  if (map.has("predicted")) {
    const YamlMap predicted(map.get_node("predicted"), path, "predicted breakdown");
    Breakdown& b = plan.predicted;
    b.iter_time = predicted.get_double("iter_time_s", 0, kMostIterationSeconds);
    read_band(predicted, plan);
    b.tflops_per_gpu = predicted.get_double("tflops_per_gpu", 0, 1e12, 0);
    b.pct_peak = predicted.get_double("pct_peak", 0, 1e6, 0);
    b.fits = predicted.get_bool("fits", true);
    const YamlMap parts(predicted.get_node("components_s"), path, "predicted components");
    double* fields[] = {&b.compute, &b.tp_comm, &b.bubble, &b.pp_comm,
                        &b.dp_comm, &b.offload, &b.optimizer};
    for (size_t i = 0; i < kComponentNames.size(); ++i) {
      *fields[i] = parts.get_double(kComponentNames[i], 0, kMostIterationSeconds);
    }
    parts.reject_unknown_keys();
    if (predicted.has("memory_GiB")) {
      const YamlMap memory(predicted.get_node("memory_GiB"), path, "predicted memory");
      constexpr double GiB = double(1ull << 30);
      b.memory.weights = memory.get_double("weights", 0, 1e9) * GiB;
      b.memory.gradients = memory.get_double("gradients", 0, 1e9) * GiB;
      b.memory.optimizer = memory.get_double("optimizer", 0, 1e9) * GiB;
      b.memory.activations = memory.get_double("activations", 0, 1e9) * GiB;
      b.memory.comm_buffers = memory.get_double("comm_buffers", 0, 1e9) * GiB;
      b.memory_capacity = memory.get_double("capacity", 0, 1e9, 0) * GiB;
      memory.reject_unknown_keys({"total"});
    }
    check_pipeline_split(predicted, plan);
    predicted.reject_unknown_keys();
  }
  map.reject_unknown_keys();
  return plan;
}

}  // namespace axo
