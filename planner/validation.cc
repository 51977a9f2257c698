// Published measurements as validation entries, costed (see validation.h).
#include "planner/validation.h"

#include <filesystem>
#include <map>

#include "model/config_fields.h"
#include "model/cost_fp8.h"
#include "model/cost_model.h"
#include "model/error.h"
#include "model/presets.h"
#include "model/yaml_fields.h"

namespace axo {

namespace {

// [forward_ms, backward_ms] of one layer, into the point.
void read_layer_times(const YamlMap& point_map, ValidationPoint& point) {
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

// A point's model: a spec's mapping, or a model preset's name (as --model takes it).
TransformerSpec read_point_model(const YamlMap& point_map, const std::string& path) {
  const YAML::Node node = point_map.get_node("model");
  if (!node.IsScalar()) {
    TransformerSpec spec = transformer_spec_from_yaml(node, path);
    validate(spec, path);
    return spec;
  }
  try {
    return load_model(node.as<std::string>());
  } catch (const InputError& e) {
    point_map.fail("model", e.what());
  }
}

ValidationPoint read_point(const YAML::Node& node, const std::string& path) {
  const YamlMap point_map(node, path, "validation point");
  ValidationPoint point;
  point.name = point_map.get_string("name");
  point.where = where(node, path);
  point.model = read_point_model(point_map, path);
  point.gpus = point_map.get_int("gpus", 1, kLargestCount);
  point.config = parallel_config_from_yaml(point_map.get_node("config"), path);
  point.measured_s = point_map.get_double("measured_s", 1e-9, 1e9, 0);
  if (point_map.has("measured_layer_ms")) read_layer_times(point_map, point);
  if (point.measured_s <= 0 && point.measured_layer_forward_ms <= 0) {
    point_map.fail("", "needs measured_s or measured_layer_ms");
  }
  if (point.config.gpus() != point.gpus) {
    point_map.fail("config", "grid product " + std::to_string(point.config.gpus()) +
                                 " does not equal gpus " + std::to_string(point.gpus));
  }
  point.stack = read_stack_section(point_map, path);
  point_map.reject_unknown_keys();
  return point;
}

// The set's machine, of the set's GPU type where it names one (the fit and the error bands group
// the runs by that type); one that does not load is kept as why, with the field's line, for a
// --machine to stand in for.
void load_set_machine(const YamlMap& map, ValidationSet& set) {
  try {
    try {
      set.profile = load_machine(set.machine);
    } catch (const InputError& e) {
      map.fail("machine", e.what());
    }
  } catch (const InputError& located) {
    set.machine_problem = located.what();
    return;
  }
  if (!set.profile->gpu_type.empty() && set.profile->gpu_type != set.gpu) {
    map.fail("gpu", set.gpu + " is not the GPU type of machine " + set.machine + " (" + set.profile->gpu_type +
                        "): the fit and the error bands group runs by it");
  }
}

}  // namespace

ValidationSet load_validation_set(const std::string& path) {
  const YamlMap map(load_yaml_file(path), path, "validation set");
  if (map.has("corpus")) map.fail("corpus", "a corpus description (public-runs.yaml), not a validation set: give it with --corpus");
  ValidationSet set;
  set.name = map.get_string("name");
  set.source = map.get_string("source");
  set.machine = map.get_string("machine");
  // A profile file named relative to the set's folder (a preset's name is not a file there).
  const std::filesystem::path beside = std::filesystem::path(path).parent_path() / set.machine;
  if (std::filesystem::path(set.machine).is_relative() && std::filesystem::is_regular_file(beside)) {
    set.machine = beside.string();
  }
  set.gpu = map.get_string("gpu");
  load_set_machine(map, set);
  set.stack = read_stack_section(map, path);
  const YAML::Node points = map.get_node("points");
  if (!points.IsSequence() || points.size() == 0) map.fail("points", "expected a non-empty list");
  for (const YAML::Node& node : points) {
    ValidationPoint point = read_point(node, path);
    for (const ValidationPoint& earlier : set.points) {
      if (earlier.name == point.name) {
        throw InputError(point.where + ": point '" + point.name + "': named twice (first at " + earlier.where + ")");
      }
    }
    set.points.push_back(std::move(point));
  }
  map.reject_unknown_keys({"models"});
  return set;
}

const char* to_string(Quantity quantity) {
  switch (quantity) {
    case Quantity::iteration_s: return "iteration (s)";
    case Quantity::layer_forward_ms: return "layer forward (ms)";
    case Quantity::layer_backward_ms: return "layer backward (ms)";
  }
  return "?";
}

namespace {

constexpr double kGiB = double(1ull << 30);

double quantity_value(const Breakdown& b, Quantity quantity) {
  switch (quantity) {
    case Quantity::iteration_s: return b.iter_time;
    case Quantity::layer_forward_ms: return b.layer_forward * 1e3;
    case Quantity::layer_backward_ms: return b.layer_backward * 1e3;
  }
  return 0;
}

// Costs an expressed entry on its own profile: prediction, error and memory.
void cost_entry(ValidationEntry& e) {
  const Breakdown b = CostModel(e.model, e.profile).evaluate(e.config);
  e.predicted = quantity_value(b, e.quantity);
  e.error_pct = 100.0 * (e.predicted - e.measured) / e.measured;
  e.memory_GiB = b.memory.total() / kGiB;
  e.usable_GiB = b.memory_capacity / kGiB;
  e.fits = b.fits;
}

}  // namespace

double predict(const ValidationEntry& entry, const MachineProfile& profile) {
  return quantity_value(CostModel(entry.model, profile).evaluate(entry.config), entry.quantity);
}

const MachineProfile& set_machine(const ValidationSet& set) {
  if (!set.profile) throw InputError(set.machine_problem);
  return *set.profile;
}

std::vector<ValidationEntry> validate_set(const ValidationSet& set, const MachineProfile& preset,
                                          const std::string& source, bool other_profile) {
  std::vector<ValidationEntry> entries;
  for (const ValidationPoint& point : set.points) {
    MachineProfile machine = preset;
    if (const auto& stack = point.stack ? point.stack : set.stack) static_cast<StackSettings&>(machine) = *stack;
    const std::string problem = CostModel(point.model, machine).pricing_problem(point.config);
    if (!problem.empty()) throw InputError(point.where + ": point '" + point.name + "': " + problem);
    ValidationEntry base;
    base.name = point.name;
    base.source = source;
    base.group = source_of(source);
    base.gpu = other_profile ? set.gpu + " on " + machine.name : set.gpu;
    base.machine = machine.name;
    base.measured_from = set.source;
    base.model = point.model;
    base.config = point.config;
    base.profile = machine;
    for (auto [quantity, measured] : {std::pair{Quantity::iteration_s, point.measured_s},
                                      std::pair{Quantity::layer_forward_ms, point.measured_layer_forward_ms},
                                      std::pair{Quantity::layer_backward_ms, point.measured_layer_backward_ms}}) {
      if (measured <= 0) continue;
      ValidationEntry e = base;
      e.quantity = quantity;
      e.measured = measured;
      cost_entry(e);
      entries.push_back(e);
    }
  }
  return entries;
}

std::vector<ValidationEntry> validate_corpus(const std::vector<CorpusCase>& cases) {
  std::map<std::string, MachineProfile> machines;
  std::vector<ValidationEntry> entries;
  for (const CorpusCase& c : cases) {
    ValidationEntry e;
    e.name = c.name;
    e.source = e.group = c.source;
    e.gpu = c.gpu;
    e.machine = c.machine;
    e.confidence = c.confidence;
    e.why_not = c.why_not;
    e.measured_from = c.measured_from;
    e.measured = c.measured_s;
    e.memory_caveat = c.memory_caveat;
    e.notes = c.notes;
    if (e.expressed()) {
      if (!machines.count(c.machine)) machines.emplace(c.machine, load_machine(c.machine));
      e.model = c.model;
      e.config = c.config;
      e.profile = machines.at(c.machine);
      static_cast<StackSettings&>(e.profile) = c.stack;
      e.why_not = CostModel(e.model, e.profile).pricing_problem(e.config);
      if (e.expressed()) cost_entry(e);
    }
    entries.push_back(e);
  }
  return entries;
}

}  // namespace axo
