// Predicted against published iteration times (see validation.h).
#include "planner/validation.h"

#include "model/cost_model.h"
#include "model/error.h"
#include "model/yaml_fields.h"

namespace axo {

ValidationSet load_validation_set(const std::string& path) {
  const YamlMap map(load_yaml_file(path), path, "validation set");
  ValidationSet set;
  set.name = map.get_string("name");
  set.source = map.get_string("source");
  set.machine = map.get_string("machine");
  const YAML::Node points = map.get_node("points");
  if (!points.IsSequence() || points.size() == 0) map.fail("points", "expected a non-empty list");
  for (const YAML::Node& node : points) {
    const YamlMap point_map(node, path, "validation point");
    ValidationPoint point;
    point.name = point_map.get_string("name");
    point.model = transformer_spec_from_yaml(point_map.get_node("model"), path);
    validate(point.model, path);
    point.gpus = point_map.get_int("gpus", 1, int64_t(1) << 30);
    point.config = parallel_config_from_yaml(point_map.get_node("config"), path);
    point.measured_s = point_map.get_double("measured_s", 1e-9, 1e9);
    if (point.config.gpus() != point.gpus) {
      point_map.fail("config", "grid product " + std::to_string(point.config.gpus()) +
                                   " does not equal gpus " + std::to_string(point.gpus));
    }
    point_map.reject_unknown_keys();
    set.points.push_back(point);
  }
  map.reject_unknown_keys({"models"});
  return set;
}

std::vector<ValidationResult> run_validation(const ValidationSet& set, const MachineProfile& machine) {
  std::vector<ValidationResult> results;
  for (const ValidationPoint& point : set.points) {
    const CostModel model(point.model, machine);
    const std::string problem = model.check(point.config);
    if (!problem.empty()) throw InputError(set.name + ": point '" + point.name + "': " + problem);
    ValidationResult r;
    r.point = &point;
    r.predicted_s = model.evaluate(point.config).iter_time;
    r.error_pct = 100.0 * (r.predicted_s - point.measured_s) / point.measured_s;
    results.push_back(r);
  }
  return results;
}

}  // namespace axo
