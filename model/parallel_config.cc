// ParallelConfig: rank-order arithmetic, equality and YAML I/O by the field table.
#include "model/parallel_config.h"

#include "model/config_fields.h"
#include "model/error.h"
#include "model/yaml_fields.h"

namespace axo {

const char* to_string(Recompute recompute) { return kRecomputeNames[size_t(recompute)]; }

std::string recompute_problem(Recompute recompute, int64_t layers) {
  if (layers < 0) return "recompute_layers=" + std::to_string(layers) + " is negative";
  if (layers == 0 || recompute == Recompute::full) return "";
  return "recompute_layers=" + std::to_string(layers) + " needs recompute=full (it names the layers of "
         "each pipeline chunk that full recompute recomputes), not recompute=" + to_string(recompute);
}

std::string context_problem(int64_t context, int64_t seq_len) {
  if (context == 1 || seq_len % (2 * context) == 0) return "";
  return "context=" + std::to_string(context) + ": 2*context=" + std::to_string(2 * context) +
         " does not divide seq_len=" + std::to_string(seq_len) +
         " (each sequence splits into 2*context equal chunks for causal load balance)";
}

std::string sequence_parallel_problem(const ParallelConfig& c) {
  // Megatron's sequence parallelism splits the rows of the residual stream over Y; Z shards the
  // weights and splits the microbatch's sequences, so with z > 1 each Z rank's rows split over Y
  // again (torchtitan's FSDP + TP with SequenceParallel). A split channel axis (x > 1) has no such layout.
  if (!c.sequence_parallel || (c.x == 1 && c.y > 1)) return "";
  std::string values = c.x != 1 ? "x=" + std::to_string(c.x) : "";
  if (c.y == 1) values += (values.empty() ? "" : ", ") + std::string("y=1");
  return "sequence parallelism needs x=1 and y>1 (tensor parallelism over Y alone, with any z), not " + values;
}

std::string sequence_split_problem(const ParallelConfig& c, int64_t seq_len) {
  if (!c.sequence_parallel || c.y == 1 || seq_len % c.context != 0) return "";  // context_problem's
  const int64_t local = seq_len / c.context;
  if (local % c.y == 0) return "";
  return "sequence_parallel=on: y=" + std::to_string(c.y) + " does not divide the " + std::to_string(local) +
         " tokens of each sequence" + (c.context > 1 ? " on a context rank (seq_len / context)" : "") +
         " (Megatron-LM and torchtitan split the sequence itself over Y)";
}

char order_letter(GridDim dim) {
  static constexpr char letters[] = {'x', 'y', 'z', 'c', 'd', 'p'};
  return letters[static_cast<int>(dim)];
}

int64_t ParallelConfig::size(GridDim dim) const {
  switch (dim) {
    case GridDim::x: return x;
    case GridDim::y: return y;
    case GridDim::z: return z;
    case GridDim::context: return context;
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
  for (const ConfigField& field : config_fields()) {
    if (field.get(a) != field.get(b)) return false;
  }
  return true;
}

std::array<GridDim, kGridDims> parse_order(const std::string& text, const std::string& source) {
  const auto fail = [&] {
    throw InputError(source + ": order '" + text +
                     "': expected the six letters x, y, z, c, d, p once each, innermost first "
                     "(without c, c goes just inside d)");
  };
  // Five letters without c: c goes just before d.
  std::string letters = text;
  if (letters.size() == kGridDims - 1 && letters.find('c') == std::string::npos) {
    const size_t d = letters.find('d');
    if (d == std::string::npos) fail();
    letters.insert(d, 1, 'c');
  }
  std::array<GridDim, kGridDims> order{};
  bool seen[kGridDims] = {};
  if (letters.size() != kGridDims) fail();
  for (int i = 0; i < kGridDims; ++i) {
    int index = -1;
    for (int d = 0; d < kGridDims; ++d) {
      if (order_letter(static_cast<GridDim>(d)) == letters[size_t(i)]) index = d;
    }
    if (index < 0 || seen[index]) fail();
    seen[index] = true;
    order[size_t(i)] = static_cast<GridDim>(index);
  }
  return order;
}

YAML::Node to_yaml(const ParallelConfig& c) {
  YAML::Node node;
  for (const ConfigField& field : config_fields()) {
    const FieldValue value = field.get(c);
    switch (field.kind) {
      case FieldKind::count: node[field.name] = value; break;
      case FieldKind::on_off: node[field.name] = value != 0; break;
      case FieldKind::choice:
      case FieldKind::order: node[field.name] = field.text(value); break;
    }
  }
  return node;
}

namespace {

// One field out of a parallel configuration's mapping (see to_yaml).
FieldValue field_from_yaml(const ConfigField& field, const YamlMap& map) {
  const FieldValue fallback = field.default_value();
  const bool absent = !map.has(field.name);
  if (absent && field.optional) return fallback;
  switch (field.kind) {
    case FieldKind::count: return map.get_int(field.name, field.minimum, int64_t(1) << 30);
    case FieldKind::on_off: return map.get_bool(field.name);
    case FieldKind::choice:
      return field.parse(field.name, map.get_choice(field.name, {field.choices.begin(), field.choices.end()}),
                         map.source());
    case FieldKind::order:
      try {
        return field.parse(field.name, map.get_string(field.name),
                           where(map.get_node(field.name), map.source()));
      } catch (const InputError& e) {
        throw InputError(std::string(e.what()) + " (field '" + field.name + "')");
      }
  }
  return fallback;
}

}  // namespace

ParallelConfig parallel_config_from_yaml(const YAML::Node& node, const std::string& source) {
  const YamlMap map(node, source, "parallel configuration");
  ParallelConfig c;
  for (const ConfigField& field : config_fields()) field.set(c, field_from_yaml(field, map));
  map.reject_unknown_keys();
  if (const std::string why = grid_too_large(c); !why.empty()) map.fail("", why);
  return c;
}

}  // namespace axo
