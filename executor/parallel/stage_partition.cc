// Balanced contiguous split of layers over pipeline stages (see stage_partition.h).
#include "executor/parallel/stage_partition.h"

#include <algorithm>
#include <limits>
#include <string>

#include "model/error.h"

namespace axo {

std::vector<LayerRange> partition_layers(const std::vector<double>& layer_costs, double first_extra,
                                         double last_extra, int64_t stages) {
  const int64_t L = int64_t(layer_costs.size());
  if (stages < 1 || stages > L) {
    throw InputError("pipeline of " + std::to_string(stages) + " stages for a model of " + std::to_string(L) +
                     " layers: each stage needs at least one layer");
  }
  std::vector<double> prefix(size_t(L + 1), 0.0);
  for (int64_t l = 0; l < L; ++l) prefix[size_t(l + 1)] = prefix[size_t(l)] + layer_costs[size_t(l)];
  auto stage_cost = [&](int64_t s, int64_t begin, int64_t end) {
    return prefix[size_t(end)] - prefix[size_t(begin)] + (s == 0 ? first_extra : 0.0) +
           (s == stages - 1 ? last_extra : 0.0);
  };
  // best[s][e]: the smallest possible maximum over stages 0..s when they cover layers [0, e).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(size_t(stages), std::vector<double>(size_t(L + 1), inf));
  std::vector<std::vector<int64_t>> split(size_t(stages), std::vector<int64_t>(size_t(L + 1), 0));
  for (int64_t e = 1; e <= L; ++e) best[0][size_t(e)] = stage_cost(0, 0, e);
  for (int64_t s = 1; s < stages; ++s) {
    for (int64_t e = s + 1; e <= L; ++e) {
      for (int64_t b = s; b < e; ++b) {
        const double cost = std::max(best[size_t(s - 1)][size_t(b)], stage_cost(s, b, e));
        if (cost < best[size_t(s)][size_t(e)]) best[size_t(s)][size_t(e)] = cost, split[size_t(s)][size_t(e)] = b;
      }
    }
  }
  std::vector<LayerRange> ranges(static_cast<size_t>(stages));
  int64_t end = L;
  for (int64_t s = stages - 1; s >= 0; --s) {
    const int64_t begin = s == 0 ? 0 : split[size_t(s)][size_t(end)];
    ranges[size_t(s)] = {begin, end};
    end = begin;
  }
  return ranges;
}

std::vector<LayerRange> partition_gpt(const GptShape& g, int64_t T, int64_t stages) {
  const double t = double(T), C = double(g.channels);
  const std::vector<double> layers(size_t(g.layers), 24.0 * t * C * C + 4.0 * t * t * C);
  return partition_layers(layers, 0.0, 2.0 * t * C * double(g.padded_vocab), stages);
}

}  // namespace axo
