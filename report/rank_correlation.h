// Spearman's rank correlation: does the planner order configurations as the
// runs do?
//
// Each list is replaced by its ranks (1 = smallest); tied values share the
// mean of the ranks they span (average ranks, so {5, 7, 7, 9} ranks as
// {1, 2.5, 2.5, 4}). Spearman's rho is then the Pearson correlation of the
// two rank lists, which is exact with ties (the shortcut
// 1 − 6Σd²/(n(n²−1)) is exact only without them).
#pragma once

#include <optional>
#include <vector>

namespace axo {

std::vector<double> average_ranks(const std::vector<double>& values);

// rho in [−1, 1]; absent when the lists differ in length, hold fewer than two
// values, or one of them is constant (all tied: no order to compare).
std::optional<double> spearman_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace axo
