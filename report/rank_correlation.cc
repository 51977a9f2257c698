// Spearman's rank correlation (see rank_correlation.h).
#include "report/rank_correlation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace axo {

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return values[i] < values[j]; });
  std::vector<double> ranks(values.size());
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;  // [start, end) hold equal values
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    const double mean_rank = double(start + 1 + end) / 2.0;  // mean of ranks start+1 .. end
    for (size_t k = start; k < end; ++k) ranks[order[k]] = mean_rank;
    start = end;
  }
  return ranks;
}

std::optional<double> spearman_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::nullopt;
  const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
  const double n = double(a.size());
  const double mean = (n + 1) / 2;  // the mean of any average-rank list
  double covariance = 0, variance_a = 0, variance_b = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    covariance += (ra[i] - mean) * (rb[i] - mean);
    variance_a += (ra[i] - mean) * (ra[i] - mean);
    variance_b += (rb[i] - mean) * (rb[i] - mean);
  }
  if (variance_a == 0 || variance_b == 0) return std::nullopt;
  return covariance / std::sqrt(variance_a * variance_b);
}

}  // namespace axo
