// The table of ParallelConfig's fields and what walks it generically: text,
// --fix, the fields held fixed, and each field's search candidates.
#include "model/config_fields.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <type_traits>

#include "model/comm_model.h"
#include "model/cost_collective.h"
#include "model/cost_split.h"
#include "model/comma_list.h"
#include "model/error.h"

namespace axo {

namespace {

// get/set of a plain member (an integer, a bool or an enum).
template <auto Member>
FieldValue get_member(const ParallelConfig& c) {
  return static_cast<FieldValue>(c.*Member);
}
template <auto Member>
void set_member(ParallelConfig& c, FieldValue value) {
  using Type = std::remove_reference_t<decltype(c.*Member)>;
  c.*Member = static_cast<Type>(value);
}

FieldValue get_order(const ParallelConfig& c) { return order_code(c.order); }
void set_order(ParallelConfig& c, FieldValue value) { c.order = order_from_code(value); }

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> result;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    result.push_back(d);
    if (d != n / d) result.push_back(n / d);
  }
  std::sort(result.begin(), result.end());
  return result;
}

// GPUs left for `field` and the grid fields inside it: the GPU count over the
// product of the grid fields of an outer nesting.
int64_t gpus_left(const ConfigField& field, const SearchSpace& space, const ParallelConfig& c) {
  int64_t used = 1;
  for (const ConfigField& outer : config_fields()) {
    if (outer.search.stage == SearchStage::grid && outer.search.nesting < field.search.nesting) {
      used *= outer.get(c);
    }
  }
  return space.gpus / used;
}

// A grid size: the divisors of the GPUs left for which `fits` holds.
template <bool (*fits)(const SearchSpace&, int64_t)>
void grid_divisors(const ConfigField& field, const SearchSpace& space, const ParallelConfig& c,
                   std::vector<FieldValue>& out) {
  for (int64_t size : divisors(gpus_left(field, space, c))) {
    if (fits(space, size)) out.push_back(size);
  }
}
bool any_size(const SearchSpace&, int64_t) { return true; }
// Any pipeline size up to the layer count: split_pipeline balances unequal stages.
bool at_most_layers(const SearchSpace& space, int64_t size) { return size <= space.spec.layers; }
bool divides_batch(const SearchSpace& space, int64_t size) { return space.spec.global_batch % size == 0; }
// Context sizes that split the sequence (context_problem: 2·context equal chunks when context > 1).
bool splits_sequence(const SearchSpace& space, int64_t size) { return context_problem(size, space.spec.seq_len).empty(); }

// The innermost grid size: whatever the others leave.
void grid_rest(const ConfigField& field, const SearchSpace& space, const ParallelConfig& c,
               std::vector<FieldValue>& out) {
  out.push_back(gpus_left(field, space, c));
}

// Sequences per microbatch: divisors of the per-replica batch that z divides
// (z shards the microbatch's sequences).
void microbatches(const ConfigField&, const SearchSpace& space, const ParallelConfig& c,
                  std::vector<FieldValue>& out) {
  for (int64_t microbatch : divisors(space.spec.global_batch / c.data)) {
    if (microbatch % c.z == 0) out.push_back(microbatch);
  }
}

// Virtual stages per pipeline stage: any count that leaves each chunk a layer
// (pipeline·interleave ≤ layers; split_pipeline balances unequal chunks);
// more than one needs pipeline stages and a microbatch count they divide
// (Narayanan et al. 2021's interleaved 1F1B). Under a held recompute_layers
// (set before the search starts), only chunks that hold that many layers.
void interleavings(const ConfigField&, const SearchSpace& space, const ParallelConfig& c,
                   std::vector<FieldValue>& out) {
  const int64_t microbatch_count = space.spec.global_batch / c.data / c.microbatch;
  for (int64_t interleave = 1; interleave * c.pipeline <= space.spec.layers; ++interleave) {
    if (interleave > 1 && (c.pipeline == 1 || microbatch_count % c.pipeline != 0)) continue;
    if (c.recompute_layers > 0 &&
        !recompute_layers_problem(remembered_split(space.spec, c.pipeline, interleave).split, c.recompute_layers)
             .empty()) {
      continue;
    }
    out.push_back(interleave);
  }
}

// Every value of an on/off or choice field, the default first.
void every_choice(const ConfigField& field, const SearchSpace&, const ParallelConfig&,
                  std::vector<FieldValue>& out) {
  const FieldValue first = field.default_value();
  out.push_back(first);
  const FieldValue count = field.kind == FieldKind::on_off ? 2 : FieldValue(field.choices.size());
  for (FieldValue value = 0; value < count; ++value) {
    if (value != first) out.push_back(value);
  }
}

// The default alone: a field the search leaves to --fix, which it takes as given
// (recompute_layers: the search's recompute choices are none, selective and full of every layer).
void default_only(const ConfigField& field, const SearchSpace&, const ParallelConfig&, std::vector<FieldValue>& out) {
  out.push_back(field.default_value());
}

// Every recompute choice; full alone under a --fix recompute_layers (an outer setting, the same
// on every grid), which names the layers full recompute recomputes.
void recompute_choices(const ConfigField& field, const SearchSpace& space, const ParallelConfig& c,
                       std::vector<FieldValue>& out) {
  if (c.recompute_layers == 0) return every_choice(field, space, c, out);
  out.push_back(FieldValue(Recompute::full));
}

// Every value where `matters` holds for the grid; elsewhere the default alone.
template <bool (*matters)(const ParallelConfig&)>
void choices_when(const ConfigField& field, const SearchSpace& space, const ParallelConfig& c,
                  std::vector<FieldValue>& out) {
  if (matters(c)) every_choice(field, space, c, out);
  else out.push_back(field.default_value());
}
bool tensor_parallel(const ParallelConfig& c) { return c.x * c.y * c.z > 1; }
// Sequence parallelism where it runs: tensor parallelism over Y alone (Z may shard the weights and
// split the rows), Y dividing each context rank's tokens (parallel_config.h); elsewhere off alone.
void sequence_parallel_choices(const ConfigField& field, const SearchSpace& space, const ParallelConfig& c,
                               std::vector<FieldValue>& out) {
  ParallelConfig on = c;
  on.sequence_parallel = true;
  if (sequence_parallel_problem(on).empty() && sequence_split_problem(on, space.spec.seq_len).empty()) {
    return every_choice(field, space, c, out);
  }
  out.push_back(field.default_value());
}
// ZeRO shards over data × context (memory_model.h zero_shards).
bool zero_group(const ParallelConfig& c) { return c.data * c.context > 1; }

void rank_orders(const ConfigField&, const SearchSpace& space, const ParallelConfig& c,
                 std::vector<FieldValue>& out) {
  for (const auto& order : distinct_orders(c, space.gpus_per_node, space.priced_groups)) {
    out.push_back(order_code(order));
  }
}

// The fields, in the order of --fix, plan.yaml and the printed table. The
// search's nesting: pipeline, data, context, z, y, x, then microbatch, interleave,
// sequence_parallel, recompute_layers, recompute, offload, zero, overlap, then the rank order.
std::vector<ConfigField> make_table() {
  constexpr bool kOncePerGrid = true;
  using K = FieldKind;
  using S = SearchStage;
  using P = ParallelConfig;
  return {
      {.name = "pipeline", .kind = K::count, .help = "pipeline stages",
       .get = get_member<&P::pipeline>, .set = set_member<&P::pipeline>,
       .header = "pipe", .width = 4,
       .search = {S::grid, 10, grid_divisors<at_most_layers>}},
      {.name = "data", .kind = K::count, .help = "data-parallel replicas",
       .get = get_member<&P::data>, .set = set_member<&P::data>,
       .header = "data", .width = 4,
       .search = {S::grid, 20, grid_divisors<divides_batch>}},
      {.name = "context", .alias = "cp", .kind = K::count,
       .help = "context-parallel ranks: each holds 2 of 2*context chunks of every sequence (ring attention)",
       .get = get_member<&P::context>, .set = set_member<&P::context>,
       .header = "ctx", .width = 3, .optional = true, .late_column = true,
       .search = {S::grid, 25, grid_divisors<splits_sequence>}},
      {.name = "x", .kind = K::count, .help = "tensor-parallel X: shards the hidden dimension",
       .get = get_member<&P::x>, .set = set_member<&P::x>,
       .header = "x", .width = 3,
       .search = {S::grid, 50, grid_rest}},
      {.name = "y", .kind = K::count, .help = "tensor-parallel Y: shards heads and the MLP width",
       .get = get_member<&P::y>, .set = set_member<&P::y>,
       .header = "y", .width = 3,
       .search = {S::grid, 40, grid_divisors<any_size>}},
      {.name = "z", .kind = K::count, .help = "tensor-parallel Z: shards the weights and the microbatch",
       .get = get_member<&P::z>, .set = set_member<&P::z>,
       .header = "z", .width = 3,
       .search = {S::grid, 30, grid_divisors<any_size>}},
      {.name = "microbatch", .kind = K::count, .help = "sequences per microbatch per replica",
       .get = get_member<&P::microbatch>, .set = set_member<&P::microbatch>,
       .header = "mb", .width = 4,
       .search = {S::setting, 60, microbatches, kOncePerGrid}},
      {.name = "recompute", .kind = K::choice, .choices = {kRecomputeNames.begin(), kRecomputeNames.end()},
       .help = "activation recomputation",
       .get = get_member<&P::recompute>, .set = set_member<&P::recompute>,
       .header = "recompute", .width = 9, .optional = true,
       .search = {S::setting, 90, recompute_choices, kOncePerGrid}},
      {.name = "recompute_layers", .kind = K::count,
       .help = "with recompute=full, the layers of each pipeline chunk recomputed, its first ones "
               "(Megatron-LM's --recompute-method block); 0: every layer",
       .get = get_member<&P::recompute_layers>, .set = set_member<&P::recompute_layers>,
       .header = "rc_l", .width = 4, .optional = true, .late_column = true, .minimum = 0,
       .search = {S::setting, 85, default_only, kOncePerGrid, true}},
      {.name = "offload", .kind = K::on_off, .help = "optimizer state in host memory",
       .get = get_member<&P::offload>, .set = set_member<&P::offload>,
       .header = "off", .width = 3, .optional = true,
       .search = {S::setting, 100, every_choice, kOncePerGrid}},
      {.name = "zero", .kind = K::choice, .choices = {"0", "1", "2"},
       .help = "ZeRO stage over the data group: 1 shards the optimizer state, 2 the gradients too",
       .get = get_member<&P::zero>, .set = set_member<&P::zero>,
       .header = "zero", .width = 4, .optional = true, .late_column = true,
       .search = {S::setting, 105, choices_when<zero_group>, kOncePerGrid}},
      {.name = "overlap", .kind = K::on_off, .help = "overlap the tensor-parallel collectives",
       .get = get_member<&P::overlap>, .set = set_member<&P::overlap>,
       .header = "ovl", .width = 3, .optional = true,
       .search = {S::setting, 110, choices_when<tensor_parallel>, kOncePerGrid}},
      {.name = "sequence_parallel", .alias = "sp", .kind = K::on_off,
       .help = "Megatron sequence parallelism; needs x=1, y>1 dividing seq_len/context",
       .get = get_member<&P::sequence_parallel>, .set = set_member<&P::sequence_parallel>,
       .header = "sp", .width = 3, .optional = true, .late_column = true,
       .search = {S::setting, 80, sequence_parallel_choices, kOncePerGrid}},
      {.name = "interleave", .kind = K::count, .help = "virtual pipeline chunks per stage",
       .get = get_member<&P::interleave>, .set = set_member<&P::interleave>,
       .header = "il", .width = 3, .optional = true,
       .search = {S::setting, 70, interleavings}},
      {.name = "order", .kind = K::order, .help = "rank order, innermost first",
       .get = get_order, .set = set_order,
       .header = "order", .width = 6, .optional = true,
       .search = {S::placement, 120, rank_orders, kOncePerGrid, true}},
  };
}

std::string join_or(const std::vector<const char*>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> table = [] {
    std::vector<ConfigField> fields = make_table();
    // FixedFields keeps one bit per field.
    if (fields.size() > 32) throw std::logic_error("FixedFields holds at most 32 fields");
    for (size_t i = 0; i < fields.size(); ++i) {
      fields[i].position = i;
      fields[i].initial = fields[i].get(ParallelConfig{});
    }
    return fields;
  }();
  return table;
}

const ConfigField* find_config_field(std::string_view key) {
  for (const ConfigField& field : config_fields()) {
    if (key == field.name || (field.alias && key == field.alias)) return &field;
  }
  return nullptr;
}

const ConfigField& config_field(std::string_view name) {
  for (const ConfigField& field : config_fields()) {
    if (name == field.name) return field;
  }
  throw std::logic_error("no configuration field '" + std::string(name) + "'");
}

std::string config_field_names() {
  std::string names;
  for (const ConfigField& field : config_fields()) {
    if (!names.empty()) names += ", ";
    names += field.name;
  }
  return names;
}

std::string grid_too_large(const ParallelConfig& config) {
  double gpus = 1;
  std::string product;
  for (const ConfigField& field : config_fields()) {
    if (field.search.stage != SearchStage::grid) continue;
    gpus *= double(field.get(config));
    if (!product.empty()) product += '*';
    product += field.name;
  }
  return gpus > 1e12 ? product + " is larger than 10^12 GPUs" : "";
}

std::string ConfigField::text(FieldValue value) const {
  switch (kind) {
    case FieldKind::count: return std::to_string(value);
    case FieldKind::choice: return choices.at(size_t(value));
    case FieldKind::on_off: return value ? "on" : "off";
    case FieldKind::order: {
      std::string letters;
      for (GridDim dim : order_from_code(value)) letters += order_letter(dim);
      return letters;
    }
  }
  return "?";
}

std::string ConfigField::allowed() const {
  switch (kind) {
    case FieldKind::count: return "a whole number from " + std::to_string(minimum) + " to 2^30";
    case FieldKind::choice: return join_or(choices);
    case FieldKind::on_off: return "on or off";
    case FieldKind::order: return "the six letters x, y, z, c, d, p once each, innermost first";
  }
  return "?";
}

FieldValue ConfigField::parse(const std::string& key, const std::string& text,
                              const std::string& source) const {
  const auto fail = [&]() -> FieldValue {
    throw InputError(source + ": " + key + "=" + text + ": expected " + allowed());
  };
  switch (kind) {
    case FieldKind::count: {
      size_t used = 0;
      int64_t value = 0;
      try {
        value = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || value < minimum || value > kLargestCount) return fail();
      return value;
    }
    case FieldKind::choice:
      for (size_t i = 0; i < choices.size(); ++i) {
        if (text == choices[i]) return FieldValue(i);
      }
      return fail();
    case FieldKind::on_off:
      if (text == "on" || text == "true" || text == "yes") return 1;
      if (text == "off" || text == "false" || text == "no") return 0;
      return fail();
    case FieldKind::order: return order_code(parse_order(text, source));
  }
  return fail();
}

namespace {

// "on|off", "none|selective|full", "N", "xyzcdp": what a field's --fix value looks like.
std::string value_pattern(const ConfigField& field) {
  switch (field.kind) {
    case FieldKind::count: return "N";
    case FieldKind::on_off: return "on|off";
    case FieldKind::order: return "xyzcdp";
    case FieldKind::choice: break;
  }
  std::string pattern;
  for (const char* choice : field.choices) {
    if (!pattern.empty()) pattern += '|';
    pattern += choice;
  }
  return pattern;
}

}  // namespace

std::string fix_help() {
  std::string help = "Hold fields fixed, as key=value,...:";
  for (const ConfigField& field : config_fields()) {
    if (&field != &config_fields().front()) help += ',';
    help += ' ';
    help += field.name;
    help += '=';
    help += value_pattern(field);
    help += " (";
    help += field.help;
    if (field.alias) {
      help += "; or ";
      help += field.alias;
      help += '=';
    }
    help += ')';
  }
  return help;
}

void FixedFields::hold(const ConfigField& field, FieldValue value) {
  held_.set(field.position);
  field.set(values, value);
}

bool FixedFields::allows(const ParallelConfig& config) const {
  for (const ConfigField& field : config_fields()) {
    if (!allows(field, field.get(config))) return false;
  }
  return true;
}

bool FixedFields::all_grid_fixed() const {
  for (const ConfigField& field : config_fields()) {
    if (field.search.stage == SearchStage::grid && !holds(field)) return false;
  }
  return true;
}

bool FixedFields::any_grid_fixed() const {
  for (const ConfigField& field : config_fields()) {
    if (field.search.stage == SearchStage::grid && holds(field)) return true;
  }
  return false;
}

FixedFields parse_fix(const std::string& text) {
  const std::string source = "--fix";
  FixedFields fixed;
  for (const std::string& item : comma_list(text, source)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError(source + ": '" + item + "': expected key=value");
    }
    const std::string key = trim_spaces(item.substr(0, eq));
    const ConfigField* field = find_config_field(key);
    if (!field) {
      throw InputError(source + ": unknown key '" + key + "' (expected " + config_field_names() + ")");
    }
    const FieldValue value = field->parse(key, trim_spaces(item.substr(eq + 1)), source);
    if (fixed.holds(*field)) {  // the last would win without a word
      throw InputError(source + ": " + field->name + " given twice (" + field->name + "=" +
                       field->text(field->get(fixed.values)) + ", then " + item + "): give each field once");
    }
    fixed.hold(*field, value);
  }
  if (const std::string why = grid_too_large(fixed.values); !why.empty()) {
    throw InputError(source + ": " + why);
  }
  return fixed;
}

std::string config_text(const ParallelConfig& config, const char* separator) {
  std::string text;
  for (const ConfigField& field : config_fields()) {
    if (!text.empty()) text += separator;
    text += std::string(field.name) + "=" + field.text(field.get(config));
  }
  return text;
}

namespace {

// The 6! rank orders in lexicographic order of GridDim, "xyzcdp" first.
constexpr size_t kOrderCount = 720;
using Orders = std::array<std::array<GridDim, kGridDims>, kOrderCount>;
const Orders& all_orders() {
  static const Orders orders = [] {
    Orders all{};
    std::array<GridDim, kGridDims> order = ParallelConfig{}.order;
    for (auto& slot : all) {
      slot = order;
      std::next_permutation(order.begin(), order.end());
    }
    return all;
  }();
  return orders;
}

}  // namespace

// The order's position among all_orders(): its Lehmer code, each letter's
// rank among the letters after it, in factorial base.
FieldValue order_code(const std::array<GridDim, kGridDims>& order) {
  FieldValue code = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    FieldValue smaller_after = 0;
    for (size_t j = i + 1; j < order.size(); ++j) smaller_after += order[j] < order[i];
    code = code * FieldValue(order.size() - i) + smaller_after;
  }
  return code;
}

// A table look-up: the search sets the rank order once per configuration it costs.
std::array<GridDim, kGridDims> order_from_code(FieldValue code) { return all_orders().at(size_t(code)); }

namespace {

// Builds rank orders innermost first and keeps one per placement. A group's
// placement depends only on the sizes inside it (its stride), so:
//   - dimensions of size 1 stay in their default slots (they place nothing);
//   - once the dimensions placed span a node or more, every dimension outside
//     has a stride of a node or more (one rank per node), so the rest go in
//     default order: their own order changes no single group's placement. A
//     group of several dimensions (data × context, x × y, z × context × data)
//     joins where they lie side by side, so the last one placed's partners (the
//     dimensions it shares a priced group with) are also tried next; where a
//     group of more than two is priced (a stage's ranks, every dimension but the
//     pipeline's; axo's executor's), the pipeline may lie between its parts, so
//     it is also tried at each place among the rest.
// That leaves a handful of orders per grid where 6! would be tried otherwise.
class OrderWalk {
 public:
  OrderWalk(const ParallelConfig& config, int64_t gpus_per_node, const std::vector<GridDims>& priced_groups)
      : gpus_per_node_(gpus_per_node),
        pipeline_moves_(std::any_of(priced_groups.begin(), priced_groups.end(),
                                    [](GridDims group) { return std::popcount(group) > 2; })),
        groups_(priced_groups),
        config_(config) {
    for (int d = 0; d < kGridDims; ++d) size_[size_t(d)] = config.size(static_cast<GridDim>(d));
    for (size_t slot = 0; slot < size_t(kGridDims); ++slot) {
      if (size_[size_t(config_default_[slot])] > 1) free_slots_.push_back(slot);
    }
  }

  std::vector<std::array<GridDim, kGridDims>> run() {
    std::array<GridDim, kGridDims> order = config_default_;
    place(order, 0, 1, 0);
    return std::move(orders_);
  }

 private:
  // Fills free slot `next` onward; `inner` ranks lie inside them; `used` marks
  // the dimensions placed so far (bit per GridDim).
  void place(std::array<GridDim, kGridDims>& order, size_t next, int64_t inner, unsigned used) {
    if (next == free_slots_.size() || inner >= gpus_per_node_) {
      if (next > 0 && next < free_slots_.size()) {  // the last one placed's partners just outside it, too
        for (GridDim partner : config_default_) {
          if (!partners(order[free_slots_[next - 1]], partner)) continue;
          if (size_[size_t(partner)] > 1 && !(used >> int(partner) & 1u)) {
            std::array<GridDim, kGridDims> beside = order;
            beside[free_slots_[next]] = partner;
            keep_filled(beside, next + 1, used | 1u << int(partner));
          }
        }
      }
      return keep_filled(order, next, used);
    }
    for (GridDim dim : config_default_) {
      if (size_[size_t(dim)] == 1 || (used >> int(dim) & 1u)) continue;
      order[free_slots_[next]] = dim;
      place(order, next + 1, inner * size_[size_t(dim)], used | 1u << int(dim));
    }
  }

  // Keeps `order` with the dimensions not in `used` from free slot `next` on: in default order
  // (the pipeline last, kept first where placements tie), and where a group of more than two
  // dimensions is priced with the pipeline at each earlier place among them, which moves only
  // such groups (a stage's, axo's executor's z x context x data).
  void keep_filled(std::array<GridDim, kGridDims> order, size_t next, unsigned used) {
    static_assert(ParallelConfig{}.order.back() == GridDim::pipeline, "the default order ends with the pipeline");
    std::vector<GridDim> rest;
    for (GridDim dim : config_default_) {
      if (size_[size_t(dim)] > 1 && !(used >> int(dim) & 1u) && dim != GridDim::pipeline) rest.push_back(dim);
    }
    const bool pipeline_left = size_[size_t(GridDim::pipeline)] > 1 && !(used >> int(GridDim::pipeline) & 1u);
    const size_t last = pipeline_left && pipeline_moves_ ? rest.size() : 0;
    for (size_t before = 0; before <= last; ++before) {  // dimensions after it
      std::vector<GridDim> filled = rest;
      if (pipeline_left) filled.insert(filled.end() - std::ptrdiff_t(before), GridDim::pipeline);
      for (size_t i = 0; i < filled.size(); ++i) order[free_slots_[next + i]] = filled[i];
      keep(order);
    }
  }

  // Whether `a` and `b` are two dimensions of one of the groups priced, but a stage's (the
  // pipeline's places among the rest try those: keep_filled).
  bool partners(GridDim a, GridDim b) const {
    if (a == b) return false;
    for (GridDims group : groups_) {
      if (group != kStageDims && has_dim(group, a) && has_dim(group, b)) return true;
    }
    return false;
  }

  void keep(const std::array<GridDim, kGridDims>& order) {
    config_.order = order;
    // Each group's and the groups of several dimensions the stack prices (priced_groups).
    Placements placement;
    for (int d = 0; d < kGridDims; ++d) {
      const GridDim dim = GridDim(d);
      placement.push_back(place_group(config_.size(dim), config_.stride(dim), gpus_per_node_, config_.gpus())
                              .ranks_per_node);
    }
    for (GridDims group : groups_) placement.push_back(grid_group(config_, group, gpus_per_node_).ranks_per_node);
    if (std::find(seen_.begin(), seen_.end(), placement) == seen_.end()) {
      seen_.push_back(placement);
      orders_.push_back(order);
    }
  }

  const int64_t gpus_per_node_;
  const bool pipeline_moves_;  // a priced group of more than two dimensions: the pipeline may split it
  const std::vector<GridDims> groups_;
  ParallelConfig config_;  // the grid, in the order being kept
  const std::array<GridDim, kGridDims> config_default_ = ParallelConfig{}.order;
  std::array<int64_t, kGridDims> size_{};
  std::vector<size_t> free_slots_;  // default-order slots of the dimensions larger than 1
  using Placements = std::vector<int64_t>;  // ranks per node: each dimension's group, then each of groups_
  std::vector<Placements> seen_;
  std::vector<std::array<GridDim, kGridDims>> orders_;
};

}  // namespace

std::vector<std::array<GridDim, kGridDims>> distinct_orders(const ParallelConfig& config, int64_t gpus_per_node,
                                                            const std::vector<GridDims>& priced_groups) {
  return OrderWalk(config, gpus_per_node, priced_groups).run();
}

}  // namespace axo
