// AdamW against a straightforward double-precision reference, and the
// vectorized and threaded forms against the scalar loop.
#include "executor/cpu/adamw.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// Values spanning several orders of magnitude, and an n that is not a
// multiple of the vector width or the block.
struct State {
  std::vector<float> theta, grad, m, v;
  explicit State(size_t n) : theta(n), grad(n), m(n, 0.0f), v(n, 0.0f) {
    for (size_t i = 0; i < n; ++i) theta[i] = float(std::sin(double(i)));
  }
  void set_gradients(long step) {
    for (size_t i = 0; i < grad.size(); ++i) grad[i] = float(std::cos(double(i * step)) * std::pow(10.0, double(i % 7) - 4));
  }
};

void expect_same(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  for (size_t i = 0; i < got.size(); ++i) {
    // The same operations in the same order; only a fused multiply-add may round differently.
    ASSERT_NEAR(got[i], want[i], 1e-6 * std::max(1.0f, std::abs(want[i]))) << what << " " << i;
  }
}

TEST(AdamW, VectorizedMatchesTheScalarLoop) {
  const size_t n = 5003;
  State fast(n), scalar(n);
  const AdamWSettings s{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (long step = 1; step <= 4; ++step) {
    fast.set_gradients(step), scalar.set_gradients(step);
    adamw_update(fast.theta.data(), fast.grad.data(), fast.m.data(), fast.v.data(), n, s, step);
    adamw_update_reference(scalar.theta.data(), scalar.grad.data(), scalar.m.data(), scalar.v.data(), n, s, step);
  }
  expect_same(fast.theta, scalar.theta, "theta");
  expect_same(fast.m, scalar.m, "m");
  expect_same(fast.v, scalar.v, "v");
}

TEST(AdamW, RangesOverThreadsMatchTheScalarLoopAndLeaveTheRestAlone) {
  const size_t n = 20000;
  // Three ranges with their own decay, a gap (4000..6000) no range covers, and
  // one range crossing the threads' shares.
  const std::vector<AdamWRange> ranges = {{0, 4000, 0.1f}, {6000, 9001, 0.0f}, {15001, 4999, 0.05f}};
  AdamWSettings s{3e-3f, 0.9f, 0.95f, 1e-8f, 0.0f};
  for (int threads : {1, 3, 8}) {
    State fast(n), scalar(n);
    for (long step = 1; step <= 3; ++step) {
      fast.set_gradients(step), scalar.set_gradients(step);
      adamw_update_ranges(fast.theta.data(), fast.grad.data(), fast.m.data(), fast.v.data(), ranges, s, step, threads);
      for (const AdamWRange& r : ranges) {
        AdamWSettings rs = s;
        rs.weight_decay = r.weight_decay;
        const size_t o = size_t(r.offset);
        adamw_update_reference(scalar.theta.data() + o, scalar.grad.data() + o, scalar.m.data() + o,
                               scalar.v.data() + o, size_t(r.size), rs, step);
      }
    }
    SCOPED_TRACE(threads);
    expect_same(fast.theta, scalar.theta, "theta");
    expect_same(fast.m, scalar.m, "m");
    for (size_t i = 4000; i < 6000; ++i) ASSERT_EQ(fast.m[i], 0.0f) << "outside every range: " << i;
  }
}

}  // namespace
}  // namespace axo::cpu
