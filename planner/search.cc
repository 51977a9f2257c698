// Enumerating, costing and ranking configurations (see search.h).
#include "planner/search.h"

#include <algorithm>
#include <chrono>

#include "model/error.h"
#include "model/memory_model.h"
#include "planner/row_folding.h"

namespace axo {

namespace {

// Keeps the `capacity` rows of smallest (key, iteration time); a row whose
// numbers equal a kept one's joins it instead (row_folding.h).
class TopRows {
 public:
  TopRows(size_t capacity, bool fold) : capacity_(capacity), fold_(fold) {}
  bool worth_adding(double key, double iter_time) const {
    return rows_.size() < capacity_ || before(key, iter_time, rows_.front());
  }
  // Keeps the configuration if it ranks among the best, or names it beside a
  // kept twin. Behind every kept row of a full table it is neither.
  void offer(double key, const ParallelConfig& config, const Breakdown& b) {
    if (rows_.size() >= capacity_ && before(rows_.front().key, rows_.front().iter_time, key, b.iter_time)) return;
    if (fold_ && fold_into_twin(config, b)) return;
    if (!worth_adding(key, b.iter_time)) return;
    rows_.push_back({key, b.iter_time, PlanRow{config, b, {}, {}, {}}});
    std::push_heap(rows_.begin(), rows_.end());
    if (rows_.size() > capacity_) {
      std::pop_heap(rows_.begin(), rows_.end());
      rows_.pop_back();
    }
  }
  std::vector<PlanRow> sorted() const {
    std::vector<Ranked> ranked = rows_;
    std::sort(ranked.begin(), ranked.end());
    std::vector<PlanRow> rows;
    for (Ranked& r : ranked) rows.push_back(std::move(r.row));
    return rows;
  }

 private:
  struct Ranked {
    double key;
    double iter_time;
    PlanRow row;
    bool operator<(const Ranked& other) const { return before(key, iter_time, other); }
  };

  // (key, iteration time) in order: the key first, ties to the faster iteration.
  static bool before(double key, double iter_time, double other_key, double other_iter_time) {
    return key != other_key ? key < other_key : iter_time < other_iter_time;
  }
  static bool before(double key, double iter_time, const Ranked& other) {
    return before(key, iter_time, other.key, other.iter_time);
  }

  bool fold_into_twin(const ParallelConfig& config, const Breakdown& b) {
    for (Ranked& kept : rows_) {
      if (!same_numbers(kept.row.breakdown, b)) continue;
      kept.row.same_numbers.push_back(config);
      return true;
    }
    return false;
  }

  size_t capacity_;
  bool fold_;
  std::vector<Ranked> rows_;  // max-heap on (key, iteration time)
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
        top_(std::max<size_t>(options.top, 1), options.fold) {}

  SearchResult run() {
    grid_level(0);
    if (result_.grids == 0) throw InputError(nothing_valid_message());
    result_.best = top_.sorted();
    for (PlanRow& row : result_.best) {
      row.training = estimate_training(space_.spec, model_.machine(), options_.gpus, row.config,
                                       row.breakdown.iter_time, options_.budget);
    }
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
    const std::string why = model_.check(probe);
    if (!why.empty() && first_rejection_.empty()) first_rejection_ = grid_text(probe) + ": " + why;
    return why.empty();
  }

  // "pipeline=12, data=32, z=1, y=1, x=1": the grid fields of `config`.
  static std::string grid_text(const ParallelConfig& config) {
    std::string text;
    for (const ConfigField& field : config_fields()) {
      if (field.search.stage != SearchStage::grid) continue;
      text += (text.empty() ? "" : ", ") + std::string(field.name) + "=" + field.text(field.get(config));
    }
    return text;
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
  // check for all of them. The bound comes first (it is cheaper); while
  // nothing fits it prunes nothing, so the closest configuration is the same.
  void on_settings() {
    if (options_.prune && !could_rank(lower_bound())) {
      result_.pruned += placement_count_;
      return;
    }
    memory_ = memory_per_device(space_.spec, config_, memory_stack(model_.machine()));
    if (memory_.total() > capacity_) return keep_closest(memory_.total());
    placement_level(0);
  }

  // Whether a configuration whose iteration takes at least `compute_s` could enter the top.
  bool could_rank(double compute_s) const {
    if (options_.rank_by == RankBy::iteration) return top_.worth_adding(compute_s, compute_s);
    return top_.worth_adding(rank_key_bound(options_.rank_by, model_, options_.gpus, config_, compute_s),
                             compute_s);
  }

  // The compute bound plus the bubble's share of it: the bubble is (p − 1)/v
  // per-microbatch times of the slowest stage, each at least the compute the
  // bound counts once per microbatch (cost_pipeline.h).
  double lower_bound() const {
    const double m = double(model_.microbatches(config_));
    const double bubble_runs = double(config_.pipeline - 1) / double(config_.interleave);
    return model_.compute_lower_bound(config_) * (1 + bubble_runs / m);
  }

  // Counts a configuration that does not fit, and keeps it if it misses by least.
  void keep_closest(double memory) {
    result_.evaluated += placement_count_;
    if (result_.closest && memory - capacity_ >= closest_excess_) return;
    for (size_t i = 0; i < placements_.size(); ++i) {
      placements_[i]->set(config_, placement_values_[i].front());
    }
    closest_excess_ = memory - capacity_;
    result_.closest = PlanRow{config_, model_.evaluate(config_), {}, {}, {}};
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
    if (options_.prune && options_.paced_bound && !could_rank(model_.paced_lower_bound(config_))) {
      ++result_.pruned;
      return;
    }
    const Breakdown b = model_.evaluate(config_, memory_);
    ++result_.evaluated;
    if (options_.record_points) result_.points.push_back({b.iter_time, memory_.total()});
    const double key = options_.rank_by == RankBy::iteration
                           ? b.iter_time
                           : rank_key(options_.rank_by, model_, options_.gpus, config_, b.iter_time);
    top_.offer(key, config_, b);
  }

  // With grid fields held by --fix, the user's values and what does not
  // divide what: their product against the GPUs, or the first grid with them
  // the model refused and why. Without, why the simplest splits fail.
  std::string nothing_valid_message() const {
    const std::string head = std::to_string(options_.gpus) + " GPUs: no split into pipeline*data*context*z*y*x";
    const FixedFields& fixed = options_.fixed;
    if (!fixed.any_grid_fixed()) {
      return head + " is valid for " + space_.spec.name + " (" + why_nothing_is_valid(model_, options_.gpus) + ")";
    }
    std::string held, product_text;
    int64_t product = 1;
    for (const ConfigField& field : config_fields()) {
      if (!fixed.holds(field)) continue;
      const std::string value = std::string(field.name) + "=" + field.text(field.get(fixed.values));
      held += (held.empty() ? "" : ",") + value;
      if (field.search.stage != SearchStage::grid) continue;
      product *= field.get(fixed.values);
      product_text += (product_text.empty() ? "" : "*") + value;
    }
    const std::string with = head + " with --fix " + held + " is valid for " + space_.spec.name;
    if (options_.gpus % product != 0) {
      return with + ": " + product_text + " = " + std::to_string(product) + " does not divide the " +
             std::to_string(options_.gpus) + " GPUs";
    }
    if (!first_rejection_.empty()) return with + " (" + first_rejection_ + ")";
    const int64_t data = fixed.values.data, pipeline = fixed.values.pipeline;
    if (fixed.holds(config_field("data")) && space_.spec.global_batch % data != 0) {
      return with + ": data=" + std::to_string(data) + " does not divide global_batch=" +
             std::to_string(space_.spec.global_batch);
    }
    if (fixed.holds(config_field("pipeline")) && pipeline > space_.spec.layers) {
      return with + ": pipeline=" + std::to_string(pipeline) + " is more stages than layers=" +
             std::to_string(space_.spec.layers);
    }
    // The held values alone (the rest at their defaults) may say it, e.g. a context that does not split the sequence.
    if (const std::string why = model_.check(fixed.values); !why.empty()) return with + " (" + why + ")";
    return with + ": the GPUs they leave split into no grid the model accepts";
  }

  const CostModel& model_;
  const SearchOptions& options_;
  const SearchSpace space_;
  const double capacity_;
  const std::vector<const ConfigField*> grid_, settings_, placements_;
  // Each level's values, kept while the levels below it run.
  std::vector<std::vector<FieldValue>> grid_values_, setting_values_, placement_values_;
  std::vector<FieldValue> first_;  // grid_is_valid's scratch
  std::string first_rejection_;    // the first grid the model refused, and why
  int64_t placement_count_ = 0;    // placements per setting of the current grid
  MemoryBreakdown memory_;         // bytes per GPU of the current setting (every placement's)
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
