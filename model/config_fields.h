// The fields of a ParallelConfig, declared once.
//
// One entry per field says its name, kind and allowed values, its help text,
// how it is read and written (the --fix text, plan.yaml, the CSV and JSON
// columns, the printed table) and how the search enumerates it. Equality,
// --fix (parsing, messages, help), FixedFields, plan.yaml, the planner's
// tables, the exports' --fix text and the search all walk this table.
//
// How to add a configuration field (say `zero`, the ZeRO stage):
//   1. Add the member, with its default, to ParallelConfig
//      (model/parallel_config.h). The member's initializer is the default:
//      the table reads it from ParallelConfig{}.
//   2. Add one entry to the table in config_fields.cc: name, kind (and the
//      choices' names), help, the member (get_member/set_member<&P::zero>),
//      its printed-table header and width, `optional` (true: plan.yaml files
//      written before the field existed still load), `late_column` (true: its
//      CSV/JSON column goes after the time columns, so scripts that read the
//      first columns by position keep working), and its search: the stage,
//      the nesting (outermost first; the numbers are spaced so a field slots
//      in between), the candidates (every_choice for a free choice,
//      choices_when<...> for one that only matters on some grids, or a
//      function of the model and the outer fields), whether they depend
//      on the grid alone (once_per_grid) and whether a --fix value is tried
//      as given (fixed_as_given); a count whose 0 means something says its
//      `minimum`.
//   3. Give it its meaning in the cost and memory models (model/cost_model.cc,
//      model/memory_model.cc) and, if some values are invalid for a model or
//      grid, in CostModel::check.
// A new grid dimension (as `context` was) is also a GridDim with its
// rank-order letter and a factor of ParallelConfig::gpus().
// The tests walk the table without naming fields, so a new entry is tested
// too: through --fix and plan.yaml (tests/model/config_fields_test.cc,
// plan_file_test.cc), the CSV, JSON and printed table
// (tests/planner/plan_table_test.cc) and the search (search_test.cc).
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

// The largest count a field (a grid size, the microbatch) or a published run's
// count may hold: 2^30, far above any cluster, far below where products overflow.
inline constexpr int64_t kLargestCount = int64_t(1) << 30;

// A field's value as one integer: a count as itself, a choice by its index in
// `choices`, on/off as 1/0, a rank order as order_code().
using FieldValue = int64_t;

enum class FieldKind {
  count,   // a whole number from the field's minimum (1, or 0) to 2^30 (a grid size, the microbatch)
  choice,  // one of the names in `choices`
  on_off,  // on or off (--fix also takes true/false, yes/no; YAML and JSON hold a boolean)
  order,   // a rank order, the six letters x, y, z, c, d, p, innermost first
};

// What the search knows when it asks a field for its candidates.
struct SearchSpace {
  const TransformerSpec& spec;
  int64_t gpus = 0;
  int64_t gpus_per_node = 0;
  std::vector<GridDims> priced_groups = pair_groups();  // the stack's groups of several dimensions (model/cost_collective.h)
};

// When the search enumerates a field.
enum class SearchStage {
  // A factor of the GPU count. The grid fields' candidates are divisors of
  // the GPUs the outer grid fields leave; the innermost takes what is left.
  grid,
  // A choice made per valid grid (microbatch, recompute, ...). Memory and the
  // compute lower bound are checked once all settings are chosen.
  setting,
  // Where the groups sit, not what they compute: changes neither memory nor
  // compute. Its candidates depend on the grid only (computed once per grid),
  // and each is one of a class of values that cost the same, so a fixed value
  // is taken as given rather than looked up among them.
  placement,
};

struct ConfigField;
// Appends the values the search tries for `field`, given `partial` (every
// field of an outer nesting set; inner ones hold stale values). The search
// applies --fix to them afterwards.
using CandidatesFn = void (*)(const ConfigField& field, const SearchSpace& space,
                              const ParallelConfig& partial, std::vector<FieldValue>& out);

struct FieldSearch {
  SearchStage stage;
  int nesting;  // outermost first, across all stages
  CandidatesFn candidates;
  // The candidates depend on the grid fields alone (not on outer settings but
  // those the search takes as given, the same on every grid): it computes them
  // once per grid.
  bool once_per_grid = false;
  // A --fix value is tried as given, whatever the candidates (placements: each candidate stands
  // for a class of equal cost; fields the search leaves at their default).
  bool fixed_as_given = false;
};

struct ConfigField {
  const char* name;
  const char* alias = nullptr;  // another --fix key for it
  FieldKind kind;
  std::vector<const char*> choices = {};  // FieldKind::choice: the names, by value
  const char* help;                       // what it means, for --fix's help
  FieldValue (*get)(const ParallelConfig&);
  void (*set)(ParallelConfig&, FieldValue);
  const char* header;        // the printed table's column header
  int width;                 // and width
  bool optional = false;     // plan.yaml may omit it (then it is the default)
  bool late_column = false;  // CSV/JSON: after the time columns (see the recipe above)
  int64_t minimum = 1;       // FieldKind::count: the least value allowed
  FieldSearch search;
  // Filled in by config_fields(): the position in the table, and the default
  // (the member's initializer, read from ParallelConfig{}).
  size_t position = 0;
  FieldValue initial = 0;

  FieldValue default_value() const { return initial; }
  // The value as --fix, the CSV and the printed table write it: "8", "full", "on", "xyzcdp".
  std::string text(FieldValue value) const;
  // The --fix text back to a value; throws InputError "SOURCE: KEY=TEXT:
  // expected ALLOWED" (an order: "SOURCE: order 'TEXT': expected ...").
  FieldValue parse(const std::string& key, const std::string& text, const std::string& source) const;
  // The allowed values in words: "a whole number from 1 to 2^30" (from the field's minimum),
  // "none, selective or full", "on or off", "the six letters ...".
  std::string allowed() const;
  // Left-aligned in the printed table (names) or right-aligned (numbers, on/off).
  bool left_aligned() const { return kind == FieldKind::choice || kind == FieldKind::order; }
};

// Every field, in the order of --fix, plan.yaml and the printed table.
const std::vector<ConfigField>& config_fields();
// The field named `name` (its name, not an alias); std::logic_error if none.
const ConfigField& config_field(std::string_view name);
// The field `key` names (its name or its alias), or nullptr.
const ConfigField* find_config_field(std::string_view key);
// The fields' names, "pipeline, data, ..., order", for messages.
std::string config_field_names();
// Empty, or "pipeline*data*x*y*z is larger than 10^12 GPUs" when the grid
// fields' product is (a typo's guard: the product must fit in int64_t).
std::string grid_too_large(const ParallelConfig& config);
// --fix's help: every field with its allowed values and meaning.
std::string fix_help();

// `config` as key=value pairs in table order joined by `separator`, e.g.
// "pipeline=2,data=4,...,order=xyzcdp": with "," a --fix value that
// reproduces `config` exactly.
std::string config_text(const ParallelConfig& config, const char* separator);

// A partial configuration from `--fix key=value,...`: the fields it holds
// fixed for the search, and their values.
class FixedFields {
 public:
  ParallelConfig values;  // the held fields' values (the others keep their defaults)

  bool holds(const ConfigField& field) const { return held_[field.position]; }
  bool holds(std::string_view name) const { return holds(config_field(name)); }  // a field by its name
  void hold(const ConfigField& field, FieldValue value);
  // The --fix matcher: `value` of `field` is the held one, or the field is free.
  bool allows(const ConfigField& field, FieldValue value) const {
    return !holds(field) || field.get(values) == value;
  }
  bool allows(const ParallelConfig& config) const;  // every field
  bool all_grid_fixed() const;  // every SearchStage::grid field held
  bool any_grid_fixed() const;

 private:
  std::bitset<32> held_;  // by position in config_fields()
};

// Parses "key=value,..." (keys: config_field_names(), or an alias); throws
// InputError naming the key and the allowed values, or a field given twice.
FixedFields parse_fix(const std::string& text);

// A rank order as one integer and back (FieldKind::order's FieldValue): its
// position, 0 to 719, among the permutations of x, y, z, c, d, p in
// lexicographic order ("xyzcdp" is 0).
FieldValue order_code(const std::array<GridDim, kGridDims>& order);
std::array<GridDim, kGridDims> order_from_code(FieldValue code);

// Rank orders (innermost first) of `config`'s grid that place its groups
// differently, the default order "xyzcdp" first: the rank order's candidates.
// Dimensions of size 1 keep their default slots, and the order of the
// dimensions outside a node is the default's (see OrderWalk), but for the
// pipeline's where `priced_groups` (the stack's groups of several dimensions: priced_groups in
// model/cost_collective.h) hold a stage's ranks (kStageDims).
std::vector<std::array<GridDim, kGridDims>> distinct_orders(const ParallelConfig& config, int64_t gpus_per_node,
                                                            const std::vector<GridDims>& priced_groups);

}  // namespace axo
