// What a pipelined run.json measured stage by stage (model/run_schema.h): its
// steps' ranks grouped by their `stage`, their components averaged over the
// stage's ranks and the averaged steps (run_file.h: the first step left out
// from three on), and the largest device peak among the stage's ranks in
// `memory.ranks`. Read with the run (MeasuredRun::stages); compared with the
// model in stage_comparison.h.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace axo {

// What run.json measured on one stage.
struct MeasuredStage {
  int64_t device_peak = 0;              // bytes: the largest peak among the stage's ranks
  std::array<double, 7> components{};  // seconds in kComponentNames order, mean over its ranks and the averaged steps
  int64_t ranks = 0;
  double work_s() const { return components[0] + components[1]; }  // compute + tp_comm
};

// One entry per stage of `stages`, from run.json's memory.ranks and steps[].ranks
// (InputError naming the field when a rank's stage is missing or out of range).
std::vector<MeasuredStage> measured_stages(const nlohmann::json& root, const std::string& source, int64_t stages);

}  // namespace axo
