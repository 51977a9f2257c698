// AdamW against a straightforward double-precision reference.
#include "executor/cpu/adamw.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace axo::cpu {
namespace {

TEST(AdamW, MatchesReference) {
  const size_t n = 1000;
  std::vector<float> theta(n), grad(n), m(n, 0), v(n, 0);
  std::vector<double> rt(n), rm(n, 0), rv(n, 0);
  for (size_t i = 0; i < n; ++i) theta[i] = float(rt[i] = std::sin(double(i)));
  const AdamWSettings s{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (long step = 1; step <= 5; ++step) {
    for (size_t i = 0; i < n; ++i) grad[i] = float(std::cos(double(i * step)));
    adamw_update(theta.data(), grad.data(), m.data(), v.data(), n, s, step);
    for (size_t i = 0; i < n; ++i) {
      const double g = grad[i];
      rm[i] = 0.9 * rm[i] + 0.1 * g;
      rv[i] = 0.95 * rv[i] + 0.05 * g * g;
      const double mhat = rm[i] / (1 - std::pow(0.9, step)), vhat = rv[i] / (1 - std::pow(0.95, step));
      rt[i] -= 1e-2 * (mhat / (std::sqrt(vhat) + 1e-8) + 0.1 * rt[i]);
    }
  }
  for (size_t i = 0; i < n; ++i) EXPECT_NEAR(theta[i], rt[i], 1e-5) << i;
}

}  // namespace
}  // namespace axo::cpu
