// Enumerating, costing and ranking configurations (see search.h).
#include "planner/search.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>

#include "model/comm_model.h"
#include "model/error.h"
#include "model/memory_model.h"
#include "planner/row_folding.h"

namespace axo {

namespace {

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

// Keeps the `capacity` rows of smallest (key, iteration time); a row whose
// numbers equal a kept one's joins it instead (row_folding.h).
class TopRows {
 public:
  TopRows(size_t capacity, bool fold) : capacity_(capacity), fold_(fold) {}
  bool worth_adding(double key, double iter_time) const {
    return rows_.size() < capacity_ || Ranked{key, {}, iter_time} < rows_.front();
  }
  // Keeps `row` if it ranks among the best, or names it beside a kept twin.
  void offer(double key, const PlanRow& row) {
    // Behind every kept row (a full table): neither kept nor any kept row's twin.
    if (rows_.size() >= capacity_ && rows_.front() < Ranked{key, {}, row.breakdown.iter_time}) return;
    if (fold_) {
      for (Ranked& kept : rows_) {
        if (!same_numbers(kept.row.breakdown, row.breakdown)) continue;
        kept.row.same_numbers.push_back(row.config);
        return;
      }
    }
    if (!worth_adding(key, row.breakdown.iter_time)) return;
    rows_.push_back({key, row, row.breakdown.iter_time});
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
    for (const Ranked& r : ranked) rows.push_back(r.row);
    return rows;
  }

 private:
  struct Ranked {
    double key;
    PlanRow row;
    double iter_time;
    bool operator<(const Ranked& other) const {
      return key != other.key ? key < other.key : iter_time < other.iter_time;
    }
  };
  size_t capacity_;
  bool fold_;
  std::vector<Ranked> rows_;  // max-heap on (key, iter_time)
};

// Why the simplest splits of `gpus` are invalid, for the error message.
std::string why_nothing_is_valid(const CostModel& model, int64_t gpus) {
  std::string reasons;
  for (GridDim dim : {GridDim::data, GridDim::y, GridDim::pipeline, GridDim::x}) {
    ParallelConfig c;
    if (dim == GridDim::data) c.data = gpus;
    if (dim == GridDim::y) c.y = gpus;
    if (dim == GridDim::pipeline) c.pipeline = gpus;
    if (dim == GridDim::x) c.x = gpus;
    const std::string why = model.check(c);
    if (!why.empty()) reasons += (reasons.empty() ? "" : "; ") + why;
  }
  return reasons;
}

}  // namespace

std::vector<std::array<GridDim, kGridDims>> distinct_orders(const ParallelConfig& config,
                                                            int64_t gpus_per_node) {
  std::array<int, kGridDims> index = {0, 1, 2, 3, 4};  // x y z d p: the default order
  std::set<std::array<int64_t, kGridDims + 1>> seen;
  std::vector<std::array<GridDim, kGridDims>> orders;
  ParallelConfig c = config;
  do {
    for (int i = 0; i < kGridDims; ++i) c.order[i] = static_cast<GridDim>(index[i]);
    std::array<int64_t, kGridDims + 1> placement{};
    for (int d = 0; d < kGridDims; ++d) {
      const GridDim dim = static_cast<GridDim>(d);
      placement[d] = place_group(c.size(dim), c.stride(dim), gpus_per_node).ranks_per_node;
    }
    // The first and last stages share the tied embedding's gradient.
    placement[kGridDims] =
        place_group(2, c.stride(GridDim::pipeline) * (c.pipeline - 1), gpus_per_node).ranks_per_node;
    if (seen.insert(placement).second) orders.push_back(c.order);
  } while (std::next_permutation(index.begin(), index.end()));
  return orders;
}

SearchResult search(const CostModel& model, const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const TransformerSpec& spec = model.spec();
  const int64_t gpn = model.machine().gpus_per_node;
  const FixedFields& fixed = options.fixed;
  const double capacity = model.machine().usable_memory_bytes();
  SearchResult result;
  TopRows top(std::max<size_t>(options.top, 1), options.fold);
  auto key = [&](const ParallelConfig& config, double iter_time) {
    return rank_key(options.rank_by, model, options.gpus, config, iter_time);
  };
  double closest_excess = 0;

  auto fixed_or = [](bool is_fixed, auto fixed_value, auto values) {
    if (!is_fixed) return values;
    return std::find(values.begin(), values.end(), fixed_value) != values.end()
               ? decltype(values){fixed_value}
               : decltype(values){};
  };

  ParallelConfig c;
  for (int64_t pipeline : divisors(options.gpus)) {
    if ((fixed.pipeline && pipeline != fixed.values.pipeline) || spec.layers % pipeline) continue;
    const int64_t after_pipeline = options.gpus / pipeline;
    for (int64_t data : divisors(after_pipeline)) {
      if ((fixed.data && data != fixed.values.data) || spec.global_batch % data) continue;
      for (int64_t z : divisors(after_pipeline / data)) {
        if (fixed.z && z != fixed.values.z) continue;
        for (int64_t y : divisors(after_pipeline / data / z)) {
          const int64_t x = after_pipeline / data / z / y;
          if ((fixed.y && y != fixed.values.y) || (fixed.x && x != fixed.values.x)) continue;
          c = ParallelConfig{};
          c.pipeline = pipeline, c.data = data, c.z = z, c.y = y, c.x = x;
          c.microbatch = z;  // the smallest microbatch z allows, to check the grid itself
          if (!model.check(c).empty()) continue;
          ++result.grids;
          const std::vector<std::array<GridDim, kGridDims>> orders =
              fixed.order ? std::vector<std::array<GridDim, kGridDims>>{fixed.values.order}
                          : distinct_orders(c, gpn);
          const bool tensor_parallel = x * y * z > 1;
          const auto overlaps = fixed_or(fixed.overlap, fixed.values.overlap,
                                         tensor_parallel ? std::vector<bool>{true, false}
                                                         : std::vector<bool>{true});
          const auto sps = fixed_or(fixed.sequence_parallel, fixed.values.sequence_parallel,
                                    x == 1 && z == 1 && y > 1 ? std::vector<bool>{false, true}
                                                              : std::vector<bool>{false});
          const auto offloads = fixed_or(fixed.offload, fixed.values.offload, std::vector<bool>{false, true});
          const auto recomputes = fixed_or(
              fixed.recompute, fixed.values.recompute,
              std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full});
          const int64_t per_replica = spec.global_batch / data;
          for (int64_t microbatch : divisors(per_replica)) {
            if (microbatch % z || (fixed.microbatch && microbatch != fixed.values.microbatch)) continue;
            c.microbatch = microbatch;
            const int64_t microbatches = per_replica / microbatch;
            for (int64_t interleave : divisors(spec.layers / pipeline)) {
              if (fixed.interleave && interleave != fixed.values.interleave) continue;
              if (interleave > 1 && (pipeline == 1 || microbatches % pipeline)) continue;
              c.interleave = interleave;
              for (bool sp : sps) {
                c.sequence_parallel = sp;
                for (Recompute recompute : recomputes) {
                  c.recompute = recompute;
                  for (bool offload : offloads) {
                    c.offload = offload;
                    for (bool overlap : overlaps) {
                      c.overlap = overlap;
                      // Memory does not depend on the rank order: one check for all orders.
                      const double memory = memory_per_device(spec, c).total();
                      if (memory > capacity) {
                        result.evaluated += int64_t(orders.size());
                        if (!result.closest || memory - capacity < closest_excess) {
                          c.order = orders.front();
                          closest_excess = memory - capacity;
                          result.closest = PlanRow{c, model.evaluate(c), {}, {}};
                        }
                        continue;
                      }
                      const double compute = model.compute_lower_bound(c);
                      if (options.prune &&
                          !top.worth_adding(rank_key_bound(options.rank_by, model, options.gpus, c, compute),
                                            compute)) {
                        result.pruned += int64_t(orders.size());
                        continue;
                      }
                      for (const auto& order : orders) {
                        c.order = order;
                        const Breakdown b = model.evaluate(c);
                        ++result.evaluated;
                        if (options.record_points) result.points.push_back({b.iter_time, memory});
                        const double k = key(c, b.iter_time);
                        top.offer(k, {c, b, {}, {}});
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (result.grids == 0) {
    std::string fixes = fixed.all_grid_fixed() || fixed.pipeline || fixed.data || fixed.x ||
                                fixed.y || fixed.z
                            ? " with the --fix values"
                            : "";
    throw InputError(std::to_string(options.gpus) + " GPUs: no split into pipeline*data*z*y*x" +
                     fixes + " is valid for " + spec.name + " (" +
                     why_nothing_is_valid(model, options.gpus) + ")");
  }
  result.best = top.sorted();
  for (PlanRow& row : result.best) {
    row.training = estimate_training(spec, model.machine(), options.gpus, row.config,
                                     row.breakdown.iter_time, options.budget);
  }
  if (!result.best.empty()) result.closest.reset();
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace axo
