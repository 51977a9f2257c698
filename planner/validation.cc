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
    point.measured_s = point_map.get_double("measured_s", 1e-9, 1e9, 0);
    if (point_map.has("measured_layer_ms")) {
      const YAML::Node layer = point_map.get_node("measured_layer_ms");
      if (!layer.IsSequence() || layer.size() != 2 || !layer[0].IsScalar() || !layer[1].IsScalar()) {
        point_map.fail("measured_layer_ms", "expected [forward_ms, backward_ms]");
      }
      try {
        point.measured_layer_forward_ms = layer[0].as<double>();
        point.measured_layer_backward_ms = layer[1].as<double>();
      } catch (const YAML::Exception&) {
        point_map.fail("measured_layer_ms", "expected two numbers");
      }
      if (!(point.measured_layer_forward_ms > 0) || !(point.measured_layer_backward_ms > 0)) {
        point_map.fail("measured_layer_ms", "expected two positive numbers");
      }
    }
    if (point.measured_s <= 0 && point.measured_layer_forward_ms <= 0) {
      point_map.fail("", "needs measured_s or measured_layer_ms");
    }
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
    const Breakdown b = model.evaluate(point.config);
    auto compare = [&](const char* quantity, double measured, double predicted) {
      if (measured <= 0) return;
      results.push_back({&point, quantity, measured, predicted, 100.0 * (predicted - measured) / measured});
    };
    compare("iteration (s)", point.measured_s, b.iter_time);
    compare("layer forward (ms)", point.measured_layer_forward_ms, b.layer_forward * 1e3);
    compare("layer backward (ms)", point.measured_layer_backward_ms, b.layer_backward * 1e3);
  }
  return results;
}

}  // namespace axo
