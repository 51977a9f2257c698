// ParallelConfig: rank-order arithmetic, --fix parsing and YAML I/O.
#include "model/parallel_config.h"

#include <sstream>

#include "model/error.h"
#include "model/yaml_fields.h"

namespace axo {

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

char order_letter(GridDim dim) {
  static constexpr char letters[] = {'x', 'y', 'z', 'd', 'p'};
  return letters[static_cast<int>(dim)];
}

int64_t ParallelConfig::size(GridDim dim) const {
  switch (dim) {
    case GridDim::x: return x;
    case GridDim::y: return y;
    case GridDim::z: return z;
    case GridDim::data: return data;
    case GridDim::pipeline: return pipeline;
  }
  return 1;
}

int64_t ParallelConfig::stride(GridDim dim) const {
  int64_t stride = 1;
  for (GridDim d : order) {
    if (d == dim) return stride;
    stride *= size(d);
  }
  return stride;
}

std::string ParallelConfig::order_string() const {
  std::string text;
  for (GridDim d : order) text += order_letter(d);
  return text;
}

bool operator==(const ParallelConfig& a, const ParallelConfig& b) {
  return a.pipeline == b.pipeline && a.data == b.data && a.x == b.x && a.y == b.y && a.z == b.z &&
         a.microbatch == b.microbatch && a.recompute == b.recompute && a.offload == b.offload &&
         a.overlap == b.overlap && a.sequence_parallel == b.sequence_parallel &&
         a.interleave == b.interleave && a.order == b.order;
}

std::array<GridDim, kGridDims> parse_order(const std::string& text, const std::string& source) {
  std::array<GridDim, kGridDims> order{};
  bool seen[kGridDims] = {};
  if (text.size() != kGridDims) {
    throw InputError(source + ": order '" + text +
                     "': expected the five letters x, y, z, d, p once each, innermost first");
  }
  for (int i = 0; i < kGridDims; ++i) {
    int index = -1;
    for (int d = 0; d < kGridDims; ++d) {
      if (order_letter(static_cast<GridDim>(d)) == text[i]) index = d;
    }
    if (index < 0 || seen[index]) {
      throw InputError(source + ": order '" + text +
                       "': expected the five letters x, y, z, d, p once each, innermost first");
    }
    seen[index] = true;
    order[i] = static_cast<GridDim>(index);
  }
  return order;
}

namespace {

int64_t parse_positive(const std::string& key, const std::string& text, const std::string& source) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 1 || value > (int64_t(1) << 30)) {
    throw InputError(source + ": " + key + "=" + text + ": expected a whole number from 1 to 2^30");
  }
  return value;
}

bool parse_on_off(const std::string& key, const std::string& text, const std::string& source) {
  if (text == "on" || text == "true" || text == "yes") return true;
  if (text == "off" || text == "false" || text == "no") return false;
  throw InputError(source + ": " + key + "=" + text + ": expected on or off");
}

Recompute parse_recompute(const std::string& text, const std::string& where) {
  if (text == "none") return Recompute::none;
  if (text == "selective") return Recompute::selective;
  if (text == "full") return Recompute::full;
  throw InputError(where + ": recompute=" + text + ": expected none, selective or full");
}

}  // namespace

FixedFields parse_fix(const std::string& text) {
  const std::string source = "--fix";
  FixedFields fixed;
  std::stringstream items(text);
  auto check_size = [&] {
    const ParallelConfig& v = fixed.values;
    if (double(v.pipeline) * double(v.data) * double(v.x) * double(v.y) * double(v.z) > 1e12) {
      throw InputError(source + ": pipeline*data*x*y*z is larger than 10^12 GPUs");
    }
  };
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError(source + ": '" + item + "': expected key=value");
    }
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    ParallelConfig& v = fixed.values;
    if (key == "pipeline") v.pipeline = parse_positive(key, value, source), fixed.pipeline = true;
    else if (key == "data") v.data = parse_positive(key, value, source), fixed.data = true;
    else if (key == "x") v.x = parse_positive(key, value, source), fixed.x = true;
    else if (key == "y") v.y = parse_positive(key, value, source), fixed.y = true;
    else if (key == "z") v.z = parse_positive(key, value, source), fixed.z = true;
    else if (key == "microbatch") v.microbatch = parse_positive(key, value, source), fixed.microbatch = true;
    else if (key == "interleave") v.interleave = parse_positive(key, value, source), fixed.interleave = true;
    else if (key == "recompute") v.recompute = parse_recompute(value, source), fixed.recompute = true;
    else if (key == "offload") v.offload = parse_on_off(key, value, source), fixed.offload = true;
    else if (key == "overlap") v.overlap = parse_on_off(key, value, source), fixed.overlap = true;
    else if (key == "sequence_parallel" || key == "sp") {
      v.sequence_parallel = parse_on_off(key, value, source), fixed.sequence_parallel = true;
    } else if (key == "order") v.order = parse_order(value, source), fixed.order = true;
    else {
      throw InputError(source + ": unknown key '" + key +
                       "' (expected pipeline, data, x, y, z, microbatch, recompute, offload, "
                       "overlap, sequence_parallel, interleave, order)");
    }
  }
  check_size();
  return fixed;
}

bool FixedFields::allows(const ParallelConfig& c) const {
  const ParallelConfig& v = values;
  return (!pipeline || c.pipeline == v.pipeline) && (!data || c.data == v.data) &&
         (!x || c.x == v.x) && (!y || c.y == v.y) && (!z || c.z == v.z) &&
         (!microbatch || c.microbatch == v.microbatch) &&
         (!recompute || c.recompute == v.recompute) && (!offload || c.offload == v.offload) &&
         (!overlap || c.overlap == v.overlap) &&
         (!sequence_parallel || c.sequence_parallel == v.sequence_parallel) &&
         (!interleave || c.interleave == v.interleave) && (!order || c.order == v.order);
}

YAML::Node to_yaml(const ParallelConfig& c) {
  YAML::Node node;
  node["pipeline"] = c.pipeline;
  node["data"] = c.data;
  node["x"] = c.x;
  node["y"] = c.y;
  node["z"] = c.z;
  node["microbatch"] = c.microbatch;
  node["recompute"] = to_string(c.recompute);
  node["offload"] = c.offload;
  node["overlap"] = c.overlap;
  node["sequence_parallel"] = c.sequence_parallel;
  node["interleave"] = c.interleave;
  node["order"] = c.order_string();
  return node;
}

ParallelConfig parallel_config_from_yaml(const YAML::Node& node, const std::string& source) {
  const YamlMap map(node, source, "parallel configuration");
  constexpr int64_t big = int64_t(1) << 30;
  ParallelConfig c;
  c.pipeline = map.get_int("pipeline", 1, big);
  c.data = map.get_int("data", 1, big);
  c.x = map.get_int("x", 1, big);
  c.y = map.get_int("y", 1, big);
  c.z = map.get_int("z", 1, big);
  c.microbatch = map.get_int("microbatch", 1, big);
  c.recompute = parse_recompute(map.get_choice("recompute", {"none", "selective", "full"}, "none"),
                                source);
  c.offload = map.get_bool("offload", false);
  c.overlap = map.get_bool("overlap", true);
  c.sequence_parallel = map.get_bool("sequence_parallel", false);
  c.interleave = map.get_int("interleave", 1, big, 1);
  if (map.has("order")) {
    try {
      c.order = parse_order(map.get_string("order"), where(map.get_node("order"), source));
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + " (field 'order')");
    }
  }
  map.reject_unknown_keys();
  if (double(c.pipeline) * double(c.data) * double(c.x) * double(c.y) * double(c.z) > 1e12) {
    map.fail("", "pipeline*data*x*y*z is larger than 10^12 GPUs");
  }
  return c;
}

}  // namespace axo
