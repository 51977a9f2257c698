// A pipelined run's measurements stage by stage (see run_stages.h).
#include "report/run_stages.h"

#include <algorithm>

#include "model/breakdown.h"
#include "model/error.h"
#include "model/run_schema.h"

namespace axo {

namespace {

namespace key = run_json;

// rank[stage] as a stage of `stages`, `field` naming it in messages.
int64_t stage_of(const nlohmann::json& rank, const std::string& source, const std::string& field, int64_t stages) {
  if (!rank.is_object() || !rank.contains(key::kStage) || !rank[key::kStage].is_number_integer() ||
      rank[key::kStage].get<int64_t>() < 0 || rank[key::kStage].get<int64_t>() >= stages) {
    throw InputError(source + ": " + field + "." + key::kStage + ": expected a stage in [0, " + std::to_string(stages) +
                     ") (the run's grid.pipeline), got " + (rank.is_object() && rank.contains(key::kStage) ? rank[key::kStage].dump() : "none"));
  }
  return rank[key::kStage].get<int64_t>();
}

double seconds_of(const nlohmann::json& rank, const char* component) {
  const nlohmann::json& parts = rank.value(key::kComponentsS, nlohmann::json::object());
  return parts.contains(component) && parts[component].is_number() ? parts[component].get<double>() : 0.0;
}

}  // namespace

std::vector<MeasuredStage> measured_stages(const nlohmann::json& root, const std::string& source, int64_t stages) {
  std::vector<MeasuredStage> measured(static_cast<size_t>(stages));
  std::vector<double> samples(size_t(stages), 0.0);
  const nlohmann::json& steps = root.at(key::kSteps);
  const size_t first = steps.size() >= 3 ? 1 : 0;  // as run_file.h: leave out the warm-up step
  for (size_t s = first; s < steps.size(); ++s) {
    const nlohmann::json& ranks = steps[s].value(key::kRanks, nlohmann::json::array());
    for (size_t k = 0; k < ranks.size(); ++k) {
      const std::string field = std::string(key::kSteps) + "[" + std::to_string(s) + "]." + key::kRanks + "[" +
                                std::to_string(k) + "]";
      const size_t stage = size_t(stage_of(ranks[k], source, field, stages));
      for (size_t i = 0; i < kComponentNames.size(); ++i) {
        measured[stage].components[i] += seconds_of(ranks[k], kComponentNames[i]);
      }
      samples[stage] += 1;
      if (s == first) ++measured[stage].ranks;
    }
  }
  for (size_t i = 0; i < measured.size(); ++i) {
    if (samples[i] == 0) continue;
    for (double& seconds : measured[i].components) seconds /= samples[i];
  }
  if (root.contains(key::kMemory) && root[key::kMemory].contains(key::kRanks)) {
    const nlohmann::json& ranks = root[key::kMemory][key::kRanks];
    for (size_t k = 0; k < ranks.size(); ++k) {
      const std::string field = std::string(key::kMemory) + "." + key::kRanks + "[" + std::to_string(k) + "]";
      MeasuredStage& m = measured[size_t(stage_of(ranks[k], source, field, stages))];
      m.device_peak = std::max(m.device_peak, ranks[k].value(key::kDevicePeakBytes, int64_t(0)));
    }
  }
  return measured;
}

}  // namespace axo
