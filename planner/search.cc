// Enumerating, costing and ranking configurations (see search.h).
#include "planner/search.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <stdexcept>
#include <string_view>

#include "model/cost_collective.h"
#include "model/cost_fp8.h"
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
    return !full() || before(key, iter_time, rows_.front());
  }
  // Whether a row must beat the last kept one to enter: until then no bound prunes.
  bool full() const { return rows_.size() >= capacity_; }
  bool empty() const { return rows_.empty(); }
  // Keeps the configuration if it ranks among the best, or names it beside a
  // kept twin. Behind every kept row of a full table it is neither.
  void offer(double key, const ParallelConfig& config, const Breakdown& b) {
    Ranked candidate{key, b.iter_time, PlanRow{config, b, {}, {}, {}}};
    if (rows_.size() >= capacity_ && rows_.front() < candidate) return;
    if (fold_ && fold_into_twin(config, b)) return;
    if (rows_.size() >= capacity_ && !(candidate < rows_.front())) return;
    rows_.push_back(std::move(candidate));
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
    // (key, iteration time), then rows that tie there by memory and by their fields in
    // config_fields() order: equal rows rank the same however the search meets them.
    bool operator<(const Ranked& other) const {
      if (key != other.key || iter_time != other.iter_time) return before(key, iter_time, other);
      const double memory = row.breakdown.memory.total(), other_memory = other.row.breakdown.memory.total();
      if (memory != other_memory) return memory < other_memory;
      for (const ConfigField& field : config_fields()) {
        const FieldValue a = field.get(row.config), b = field.get(other.row.config);
        if (a != b) return a < b;
      }
      return false;
    }
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

// Why the simplest splits of `gpus` are invalid, for the error message; a reason they share, once.
std::string why_nothing_is_valid(const CostModel& model, int64_t gpus) {
  std::vector<std::string> seen;
  std::string reasons;
  for (const char* dimension : {"data", "y", "pipeline", "x"}) {
    ParallelConfig c;
    config_field(dimension).set(c, gpus);
    const std::string why = model.check(c);
    if (why.empty() || std::find(seen.begin(), seen.end(), why) != seen.end()) continue;
    seen.push_back(why);
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

// Settings the compute bound reads (CostModel::compute_lower_bound: its
// memo's key and the pipeline's split): the settings nested inside the last
// of them leave it unchanged, so it is checked once for all of them.
constexpr std::array<std::string_view, 5> kComputeBoundSettings = {"microbatch", "interleave", "sequence_parallel",
                                                                   "recompute_layers", "recompute"};
// Settings a layer's paced time reads (CostModel::paced_lower_bound: its
// compute and exposed tensor-parallel and ring communication, the memos'
// keys). The others change only the factor it is multiplied by, the
// microbatches and bubble runs of the fullest stage (interleave), or nothing
// in it (offload, zero): that factor is every placement's, so the placement
// whose layers pace fastest is the same for all of them.
constexpr std::array<std::string_view, 5> kPacingSettings = {"microbatch", "sequence_parallel", "recompute_layers",
                                                             "recompute", "overlap"};
// Settings that change that factor but not the layer's time: the paced
// bound itself is the same until one of them changes.
constexpr std::array<std::string_view, 1> kPacingFactorSettings = {"interleave"};

// The depth after the last of `fields` named in `names`, where a check of
// what only those fields change can stand for all the settings inside; the
// end when a field inside has candidates that are not once per grid (then
// their count is unknown there).
size_t depth_after(const std::vector<const ConfigField*>& fields, std::span<const std::string_view> names) {
  size_t depth = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (std::find(names.begin(), names.end(), fields[i]->name) != names.end()) depth = i + 1;
  }
  for (size_t i = depth; i < fields.size(); ++i) {
    if (!fields[i]->search.once_per_grid) return fields.size();
  }
  return depth;
}

// The positions in `fields` of those named in `names`; each must have
// candidates once per grid (the search numbers their values per grid).
std::vector<size_t> positions(const std::vector<const ConfigField*>& fields, std::span<const std::string_view> names) {
  std::vector<size_t> found;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (std::find(names.begin(), names.end(), fields[i]->name) == names.end()) continue;
    if (!fields[i]->search.once_per_grid) throw std::logic_error("a pacing setting must be once per grid");
    found.push_back(i);
  }
  return found;
}

// By position in `fields`: whether it is named in `names`.
std::vector<bool> named(const std::vector<const ConfigField*>& fields, std::span<const std::string_view> names) {
  std::vector<bool> found;
  for (const ConfigField* field : fields) {
    found.push_back(std::find(names.begin(), names.end(), field->name) != names.end());
  }
  return found;
}

// One search: the walk through the field table's stages, one recursion level
// per field, and what it has found so far. `config_` holds the fields of the
// levels above the current one.
class Walk {
 public:
  Walk(const CostModel& model, const SearchOptions& options)
      : model_(model),
        options_(options),
        space_{model.spec(), options.gpus, model.machine().gpus_per_node,
               priced_groups(model.spec(), model.machine())},
        capacity_(model.machine().usable_memory_bytes()),
        grid_(stage_fields(SearchStage::grid)),
        settings_(stage_fields(SearchStage::setting)),
        placements_(stage_fields(SearchStage::placement)),
        grid_values_(grid_.size()),
        setting_values_(settings_.size()),
        placement_values_(placements_.size()),
        top_(std::max<size_t>(options.top, 1), options.fold),
        bound_depth_(options.setting_bounds ? depth_after(settings_, kComputeBoundSettings) : settings_.size()),
        pacing_settings_(positions(settings_, kPacingSettings)),
        changes_pacing_factor_(named(settings_, kPacingFactorSettings)) {}

  SearchResult run() {
    // A value --fix holds as given is the same on every configuration: set before any candidates
    // are computed, which may depend on it (recompute's on recompute_layers).
    for (const ConfigField& field : config_fields()) {
      if (field.search.fixed_as_given && options_.fixed.holds(field)) field.set(config_, field.get(options_.fixed.values));
    }
    grid_level(0);
    if (result_.grids == 0) throw InputError(nothing_valid_message());
    result_.best = top_.sorted();
    for (PlanRow& row : result_.best) estimate(row);
    if (!result_.best.empty()) result_.closest.reset();
    if (result_.closest) estimate(*result_.closest);  // shown beside the error: its goodput too
    return result_;
  }

 private:
  void estimate(PlanRow& row) const {
    row.training = estimate_training(space_.spec, model_.machine(), options_.gpus, row.config, row.breakdown.iter_time,
                                     options_.budget);
  }

  // The values of `field` the search tries here: its candidates that --fix
  // allows, or the fixed value as given (FieldSearch::fixed_as_given).
  const std::vector<FieldValue>& tries(const ConfigField& field, std::vector<FieldValue>& out) const {
    out.clear();
    const FixedFields& fixed = options_.fixed;
    if (field.search.fixed_as_given && fixed.holds(field)) {
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
    reset_fastest_placements();
    // No setting of the grid needs less than its model states' floor: a grid beyond it is counted
    // out whole (recording points too: they are only of configurations that fit).
    const double floor = model_state_floor_bytes(space_.spec, config_, memory_stack(model_.machine()));
    if ((options_.prune || options_.record_points) && cannot_fit_or_come_closer(floor)) {
      result_.pruned += placement_count_ * settings_from(0);
      return;
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
      if (first_.empty()) {
        if (first_rejection_.empty()) first_rejection_ = grid_text(probe) + ": " + no_candidate(*field, probe);
        return false;
      }
      field->set(probe, first_.front());
    }
    const std::string why = model_.check(probe);
    if (!why.empty() && first_rejection_.empty()) first_rejection_ = grid_text(probe) + ": " + why;
    return why.empty();
  }

  // "pipeline=12, data=32, z=1, y=1, x=1": the grid fields of `config`.
  // Why a setting has no value for the grid: z shards a microbatch's sequences, so a microbatch is
  // a multiple of z that divides the sequences of a data rank (config_fields.cc microbatches).
  std::string no_candidate(const ConfigField& field, const ParallelConfig& c) const {
    if (std::string_view(field.name) != "microbatch") return std::string("no ") + field.name + " is valid";
    return "no microbatch that divides the " + std::to_string(space_.spec.global_batch / c.data) +
           " sequences per data rank is a multiple of z=" + std::to_string(c.z);
  }

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
    if (depth == bound_depth_ && !compute_bound_allows(depth)) return;
    const ConfigField& field = *settings_[depth];
    std::vector<FieldValue>& values = setting_values_[depth];
    if (!field.search.once_per_grid) tries(field, values);
    const bool innermost = depth + 1 == settings_.size();
    for (size_t i = 0; i < values.size(); ++i) {
      setting_index_[depth] = i;
      field.set(config_, values[i]);
      if (changes_pacing_factor_[depth]) ++pacing_factor_stamp_;
      if (innermost) on_settings();  // one call less per setting of the grid
      else setting_level(depth + 1);
    }
  }

  // Memory and the bounds below do not depend on the placement: one check
  // for all of them. The bounds come first (they are cheaper); while nothing
  // fits they prune nothing, so the closest configuration is the same.
  //   - the compute bound (lower_bound), which setting_level may have found
  //     too slow already for this setting and those around it;
  //   - the paced bound (CostModel::paced_lower_bound) of the placement whose
  //     layers communicate least (fastest_paced_bound): no placement's is
  //     lower, so each placement it prunes the rank-order bound would too.
  void on_settings() {
    if (bound_depth_ == settings_.size() && !compute_bound_allows(settings_.size())) return;
    if (options_.prune && top_.full()) {
      const bool pace = options_.paced_bound && options_.setting_bounds;
      if (!could_rank(pace ? std::max(compute_bound_, fastest_paced_bound()) : compute_bound_)) {
        result_.pruned += placement_count_;
        return;
      }
    }
    memory_ = memory_per_device(space_.spec, config_, memory_stack(model_.machine()));
    if (memory_.total() > capacity_) return keep_closest(memory_.total());
    placement_level(0);
  }

  // With prune, whether the settings from `depth` inward could rank by the
  // compute bound, which none of them changes (kComputeBoundSettings); when
  // not, they count as pruned, with all their placements. The bound is kept
  // (compute_bound_) for on_settings to check again as the top fills; while the
  // top is not full it is neither computed nor checked (0: it could prune nothing
  // then), which leaves the settings inside it to the paced bound once it fills.
  bool compute_bound_allows(size_t depth) {
    compute_bound_ = 0;  // what every configuration's time is at least, until the top is full
    if (!options_.prune || !top_.full()) return true;
    compute_bound_ = lower_bound();
    if (could_rank(compute_bound_)) return true;
    int64_t skipped = placement_count_;
    for (size_t i = depth; i < settings_.size(); ++i) skipped *= int64_t(setting_values_[i].size());
    result_.pruned += skipped;
    return false;
  }

  // With the pacing settings' values numbered per grid, one slot per
  // combination of them: the placement whose layers pace fastest, found when
  // first asked.
  void reset_fastest_placements() {
    size_t combinations = 1;
    for (size_t i : pacing_settings_) combinations *= setting_values_[i].size();
    fastest_found_.assign(combinations, false);
    fastest_values_.resize(combinations * placements_.size());
    fastest_bounds_.assign(combinations, {-1, 0.0});
  }

  // CostModel::paced_lower_bound of the current settings on the placement
  // whose layers pace fastest: no placement's bound is lower
  // (kPacingSettings). Kept until the pacing factor changes.
  double fastest_paced_bound() {
    size_t slot = 0;
    for (size_t i : pacing_settings_) slot = slot * setting_values_[i].size() + setting_index_[i];
    std::pair<int64_t, double>& bound = fastest_bounds_[slot];
    if (bound.first == pacing_factor_stamp_) return bound.second;
    FieldValue* values = fastest_values_.data() + slot * placements_.size();
    if (!fastest_found_[slot]) {
      double fastest = 1e300;
      find_fastest_placement(0, fastest, values);
      fastest_found_[slot] = true;
    }
    for (size_t i = 0; i < placements_.size(); ++i) placements_[i]->set(config_, values[i]);
    bound = {pacing_factor_stamp_, model_.paced_lower_bound(config_)};
    return bound.second;
  }

  // Every placement from `depth` inward; the one of lowest paced bound (the first of equals) into `best`.
  void find_fastest_placement(size_t depth, double& fastest, FieldValue* best) {
    if (depth == placements_.size()) {
      const double bound = model_.paced_lower_bound(config_);
      if (bound >= fastest) return;
      fastest = bound;
      for (size_t i = 0; i < placements_.size(); ++i) best[i] = placements_[i]->get(config_);
      return;
    }
    for (FieldValue value : placement_values_[depth]) {
      placements_[depth]->set(config_, value);
      find_fastest_placement(depth + 1, fastest, best);
    }
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

  // The settings of the current grid from `depth` inward, as setting_level walks them: where
  // every field inward has its candidates once per grid, the product of their counts.
  int64_t settings_from(size_t depth) {
    const bool once_each = std::all_of(settings_.begin() + ptrdiff_t(depth), settings_.end(),
                                       [](const ConfigField* field) { return field->search.once_per_grid; });
    if (once_each) {
      int64_t count = 1;
      for (size_t i = depth; i < settings_.size(); ++i) count *= int64_t(setting_values_[i].size());
      return count;
    }
    const ConfigField& field = *settings_[depth];
    std::vector<FieldValue> values;
    if (!field.search.once_per_grid) tries(field, values);
    int64_t count = 0;
    for (FieldValue value : field.search.once_per_grid ? setting_values_[depth] : values) {
      field.set(config_, value);
      count += settings_from(depth + 1);
    }
    return count;
  }

  // Whether a setting that needs at least `floor_bytes` per GPU neither fits nor, while nothing
  // fits, misses by less than the closest configuration so far (keep_closest keeps the first of equals).
  bool cannot_fit_or_come_closer(double floor_bytes) const {
    if (floor_bytes <= capacity_) return false;
    return !top_.empty() || (result_.closest && floor_bytes - capacity_ >= closest_excess_);
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
    if (options_.prune && options_.paced_bound && top_.full() && !could_rank(model_.paced_lower_bound(config_))) {
      ++result_.pruned;
      return;
    }
    const Breakdown b = model_.evaluate(config_, memory_);
    ++result_.evaluated;
    if (options_.record_points) result_.points.push_back({b.iter_time, memory_.total()});
    const double key = options_.rank_by == RankBy::iteration
                           ? b.iter_time
                           : rank_key(options_.rank_by, model_, options_.gpus, config_, b.iter_time);
    if (options_.accept && !options_.accept(config_)) return;
    top_.offer(key, config_, b);
  }

  // With grid fields held by --fix, the user's values and what does not
  // divide what: their product against the GPUs, or the first grid with them
  // the model refused and why. Without, why the simplest splits fail.
  std::string nothing_valid_message() const {
    const std::string head = std::to_string(options_.gpus) + " GPUs: no split into pipeline*data*context*z*y*x";
    const FixedFields& fixed = options_.fixed;
    const std::string held_why = model_.check_held(fixed, options_.gpus);
    if (!fixed.any_grid_fixed() && held_why.empty()) {
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
      const bool one_field = product_text.find('*') == std::string::npos;
      return with + ": " + product_text + (one_field ? "" : " = " + std::to_string(product)) + " does not divide the " +
             std::to_string(options_.gpus) + " GPUs";
    }
    if (!held_why.empty()) return with + " (" + held_why + ")";
    if (!first_rejection_.empty()) return with + " (" + first_rejection_ + ")";
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
  const size_t bound_depth_;  // where setting_level checks the compute bound (the end: on_settings)
  const std::vector<size_t> pacing_settings_;  // positions in settings_ of kPacingSettings
  std::vector<size_t> setting_index_ = std::vector<size_t>(settings_.size());  // each setting's value, by position
  std::vector<bool> fastest_found_;            // by combination of the pacing settings' values
  std::vector<FieldValue> fastest_values_;     // and its fastest placement's values
  std::vector<std::pair<int64_t, double>> fastest_bounds_;  // and the pacing factor's stamp and the bound
  const std::vector<bool> changes_pacing_factor_;  // by position in settings_: kPacingFactorSettings
  int64_t pacing_factor_stamp_ = 0;                // changes whenever one of them does
  double compute_bound_ = 0;                       // lower_bound() of the current setting
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
