// Files the report tests make: a temporary folder per test, a run.json with
// given steps and a plan.yaml with a given prediction.
#pragma once

#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/breakdown.h"
#include "model/plan_file.h"
#include "model/presets.h"

namespace axo::testing {

// A folder removed with the object.
class TemporaryFolder {
 public:
  explicit TemporaryFolder(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("axo_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TemporaryFolder() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

// One step of a run: iteration seconds and the seven components.
struct StepTimes {
  double iteration_s = 0;
  std::array<double, 7> components{};
};

inline nlohmann::json run_json(const std::vector<StepTimes>& steps) {
  nlohmann::json root;
  root["model"] = "gpt2-tiny";
  root["ranks"] = 1;
  root["grid"] = {{"pipeline", 1}, {"data", 1}, {"z", 1}, {"y", 1}, {"x", 1}};
  root["steps"] = nlohmann::json::array();
  for (size_t s = 0; s < steps.size(); ++s) {
    nlohmann::json step;
    step["step"] = s;
    step["iteration_s"] = steps[s].iteration_s;
    for (size_t i = 0; i < kComponentNames.size(); ++i) {
      step["components_s"][kComponentNames[i]] = steps[s].components[i];
    }
    root["steps"].push_back(step);
  }
  return root;
}

// A run of gpt2-tiny on two stages × two data ranks (xyzdp: ranks 0, 1 on stage 0), three steps,
// its ranks' components and device peaks by stage; stage 1 works twice as long.
inline nlohmann::json two_stage_run() {
  nlohmann::json root;
  root["model"] = "gpt2-tiny";
  root["ranks"] = 4;
  root["grid"] = {{"pipeline", 2}, {"data", 2}, {"z", 1}, {"y", 1}, {"x", 1}};
  root["steps"] = nlohmann::json::array();
  for (int s = 0; s < 3; ++s) {
    nlohmann::json step;
    step["step"] = s;
    step["iteration_s"] = 1.0;
    for (int k = 0; k < 4; ++k) {
      const double warm_up = s == 0 ? 10.0 : 1.0;  // left out
      nlohmann::json rank = {{"rank", k}, {"stage", k / 2}};
      for (const char* component : kComponentNames) rank["components_s"][component] = 0.0;
      rank["components_s"]["compute"] = warm_up * (k / 2 + 1) * 0.2 + 0.01 * k;
      rank["components_s"]["tp_comm"] = 0.1;
      step["ranks"].push_back(rank);
      for (const char* component : kComponentNames) step["components_s"][component] = 0.0;
    }
    root["steps"].push_back(step);
  }
  root["memory"]["offload"] = false;
  for (int k = 0; k < 4; ++k) {
    nlohmann::json rank = {{"rank", k}, {"stage", k / 2}, {"device_peak_bytes", 1000 * (k + 1)}, {"host_bytes", 0}};
    for (const char* part : kMemoryNames) rank["device_at_peak_bytes"][part] = 0;
    rank["device_at_peak_bytes"]["weights"] = 1000 * (k + 1);
    root["memory"]["ranks"].push_back(rank);
  }
  return root;
}

// `root` as a run of `plan` says it is: the plan's model, ranks and grid.
inline void run_of(nlohmann::json& root, const Plan& plan) {
  const ParallelConfig& c = plan.config;
  root["model"] = plan.model.name;
  root["ranks"] = plan.gpus;
  root["grid"] = {{"pipeline", c.pipeline}, {"data", c.data}, {"z", c.z}, {"y", c.y}, {"x", c.x}};
}

// A one-GPU plan of gpt2-tiny whose prediction is `predicted`.
inline Plan one_gpu_plan(const Breakdown& predicted) {
  Plan plan;
  plan.model = load_model("gpt2-tiny");
  plan.machine = "test";
  plan.gpus = 1;
  plan.config.microbatch = 1;
  plan.predicted = predicted;
  return plan;
}

// A copy of the selene preset in `folder` that says it is a partial calibration, as calibrate
// writes one whose measurement failed (metadata.complete: false and the error).
inline std::string partial_selene(const TemporaryFolder& folder) {
  std::ifstream preset(resolve_preset("machines", "selene"));
  std::stringstream text;
  text << preset.rdbuf() << "metadata:\n  complete: false\n  error: \"rank 1: all_reduce stopped\"\n";
  return folder.write("partial-selene.yaml", text.str());
}

inline Breakdown breakdown_of(double compute, double tp_comm, double bubble, double pp_comm,
                              double dp_comm, double offload, double optimizer) {
  Breakdown b;
  b.compute = compute, b.tp_comm = tp_comm, b.bubble = bubble, b.pp_comm = pp_comm;
  b.dp_comm = dp_comm, b.offload = offload, b.optimizer = optimizer;
  b.iter_time = compute + tp_comm + bubble + pp_comm + dp_comm + offload + optimizer;
  return b;
}

}  // namespace axo::testing
