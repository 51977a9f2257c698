// Enumerating, costing and ranking configurations (see search.h).
#include "planner/search.h"

#include <algorithm>
#include <chrono>

#include "model/error.h"
#include "model/memory_model.h"

namespace axo {

namespace {

// Keeps the `capacity` fastest rows.
class TopRows {
 public:
  explicit TopRows(size_t capacity) : capacity_(capacity) {}
  bool worth_adding(double iter_time) const {
    return rows_.size() < capacity_ || iter_time < rows_.front().breakdown.iter_time;
  }
  void add(const PlanRow& row) {
    auto slower = [](const PlanRow& a, const PlanRow& b) {
      return a.breakdown.iter_time < b.breakdown.iter_time;
    };
    rows_.push_back(row);
    std::push_heap(rows_.begin(), rows_.end(), slower);
    if (rows_.size() > capacity_) {
      std::pop_heap(rows_.begin(), rows_.end(), slower);
      rows_.pop_back();
    }
  }
  std::vector<PlanRow> sorted() const {
    std::vector<PlanRow> rows = rows_;
    std::sort(rows.begin(), rows.end(), [](const PlanRow& a, const PlanRow& b) {
      return a.breakdown.iter_time < b.breakdown.iter_time;
    });
    return rows;
  }

 private:
  size_t capacity_;
  std::vector<PlanRow> rows_;  // max-heap on iter_time
};

// Why the simplest splits of `gpus` are invalid, for the error message.
std::string why_nothing_is_valid(const CostModel& model, int64_t gpus) {
  std::string reasons;
  for (const char* dimension : {"data", "y", "pipeline", "x"}) {
    ParallelConfig c;
    config_field(dimension).set(c, gpus);
    const std::string why = model.check(c);
    if (why.empty()) continue;
    if (!reasons.empty()) reasons += "; ";
    reasons += why;
  }
  return reasons;
}

// The fields of one stage of the search, outermost first.
std::vector<const ConfigField*> stage_fields(SearchStage stage) {
  std::vector<const ConfigField*> fields;
  for (const ConfigField& field : config_fields()) {
    if (field.search.stage == stage) fields.push_back(&field);
  }
  std::sort(fields.begin(), fields.end(), [](const ConfigField* a, const ConfigField* b) {
    return a->search.nesting < b->search.nesting;
  });
  return fields;
}

// One search: the walk through the field table's stages, one recursion level
// per field, and what it has found so far. `config_` holds the fields of the
// levels above the current one.
class Walk {
 public:
  Walk(const CostModel& model, const SearchOptions& options)
      : model_(model),
        options_(options),
        space_{model.spec(), options.gpus, model.machine().gpus_per_node},
        capacity_(model.machine().usable_memory_bytes()),
        grid_(stage_fields(SearchStage::grid)),
        settings_(stage_fields(SearchStage::setting)),
        placements_(stage_fields(SearchStage::placement)),
        grid_values_(grid_.size()),
        setting_values_(settings_.size()),
        placement_values_(placements_.size()),
        top_(std::max<size_t>(options.top, 1)) {}

  SearchResult run() {
    grid_level(0);
    if (result_.grids == 0) throw InputError(nothing_valid_message());
    result_.best = top_.sorted();
    if (!result_.best.empty()) result_.closest.reset();
    return result_;
  }

 private:
  // The values of `field` the search tries here: its candidates that --fix
  // allows. A placement's candidates stand for classes of equal cost, so a
  // fixed placement is tried as given.
  const std::vector<FieldValue>& tries(const ConfigField& field, std::vector<FieldValue>& out) const {
    out.clear();
    const FixedFields& fixed = options_.fixed;
    if (field.search.stage == SearchStage::placement && fixed.holds(field)) {
      out.push_back(field.get(fixed.values));
      return out;
    }
    field.search.candidates(field, space_, config_, out);
    if (fixed.holds(field)) {
      std::erase_if(out, [&](FieldValue value) { return !fixed.allows(field, value); });
    }
    return out;
  }

  void grid_level(size_t depth) {
    if (depth == grid_.size()) return on_grid();
    for (FieldValue value : tries(*grid_[depth], grid_values_[depth])) {
      grid_[depth]->set(config_, value);
      grid_level(depth + 1);
    }
  }

  void on_grid() {
    if (!grid_is_valid()) return;
    ++result_.grids;
    placement_count_ = 1;
    for (size_t i = 0; i < placements_.size(); ++i) {
      placement_count_ *= int64_t(tries(*placements_[i], placement_values_[i]).size());
    }
    for (size_t i = 0; i < settings_.size(); ++i) {
      if (settings_[i]->search.once_per_grid) tries(*settings_[i], setting_values_[i]);
    }
    setting_level(0);
  }

  // A grid is valid when the model accepts it with each setting at its first
  // candidate (the smallest microbatch z allows, no interleaving, ...) and
  // the placements at their defaults: settings only add constraints.
  bool grid_is_valid() {
    ParallelConfig probe = config_;
    for (const ConfigField* field : placements_) field->set(probe, field->default_value());
    for (const ConfigField* field : settings_) {
      first_.clear();
      field->search.candidates(*field, space_, probe, first_);
      if (first_.empty()) return false;
      field->set(probe, first_.front());
    }
    return model_.check(probe).empty();
  }

  void setting_level(size_t depth) {
    if (depth == settings_.size()) return on_settings();
    const ConfigField& field = *settings_[depth];
    std::vector<FieldValue>& values = setting_values_[depth];
    if (!field.search.once_per_grid) tries(field, values);
    const bool innermost = depth + 1 == settings_.size();
    for (FieldValue value : values) {
      field.set(config_, value);
      if (innermost) on_settings();  // one call less per setting of the grid
      else setting_level(depth + 1);
    }
  }

  // Memory and the compute lower bound do not depend on the placement: one
  // check for all of them.
  void on_settings() {
    const double memory = memory_per_device(space_.spec, config_).total();
    if (memory > capacity_) return keep_closest(memory);
    if (options_.prune && !top_.worth_adding(model_.compute_lower_bound(config_))) {
      result_.pruned += placement_count_;
      return;
    }
    placement_level(0);
  }

  // Counts a configuration that does not fit, and keeps it if it misses by least.
  void keep_closest(double memory) {
    result_.evaluated += placement_count_;
    if (result_.closest && memory - capacity_ >= closest_excess_) return;
    for (size_t i = 0; i < placements_.size(); ++i) {
      placements_[i]->set(config_, placement_values_[i].front());
    }
    closest_excess_ = memory - capacity_;
    result_.closest = PlanRow{config_, model_.evaluate(config_)};
  }

  void placement_level(size_t depth) {
    if (depth == placements_.size()) return evaluate();
    const ConfigField& field = *placements_[depth];
    const bool innermost = depth + 1 == placements_.size();
    for (FieldValue value : placement_values_[depth]) {
      field.set(config_, value);
      if (innermost) evaluate();  // the hot loop: one call less per configuration
      else placement_level(depth + 1);
    }
  }

  void evaluate() {
    const Breakdown b = model_.evaluate(config_);
    ++result_.evaluated;
    if (top_.worth_adding(b.iter_time)) top_.add({config_, b});
  }

  std::string nothing_valid_message() const {
    const std::string fixes = options_.fixed.any_grid_fixed() ? " with the --fix values" : "";
    // What in the user's own values does not divide what, when that alone says it.
    if (const std::string why = model_.check(options_.fixed.values); !fixes.empty() && !why.empty()) {
      return std::to_string(options_.gpus) + " GPUs: no split into pipeline*data*context*z*y*x" + fixes +
             " is valid for " + space_.spec.name + " (" + why + ")";
    }
    return std::to_string(options_.gpus) + " GPUs: no split into pipeline*data*context*z*y*x" + fixes +
           " is valid for " + space_.spec.name + " (" +
           why_nothing_is_valid(model_, options_.gpus) + ")";
  }

  const CostModel& model_;
  const SearchOptions& options_;
  const SearchSpace space_;
  const double capacity_;
  const std::vector<const ConfigField*> grid_, settings_, placements_;
  // Each level's values, kept while the levels below it run.
  std::vector<std::vector<FieldValue>> grid_values_, setting_values_, placement_values_;
  std::vector<FieldValue> first_;  // grid_is_valid's scratch
  int64_t placement_count_ = 0;    // placements per setting of the current grid
  ParallelConfig config_;
  TopRows top_;
  SearchResult result_;
  double closest_excess_ = 0;
};

}  // namespace

SearchResult search(const CostModel& model, const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult result = Walk(model, options).run();
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace axo
