// Piecewise latency/bandwidth fits (see fit.h).
#include "calibrate/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/comm_model.h"

namespace axo::calibration {

namespace {

struct LineFit {
  double alpha = 0;  // seconds
  double beta = 0;   // seconds per (f·byte)
  double cost = 0;   // Σ relative squared error
};

// Weighted least squares of t ≈ α + β·x, x = f·S, weights 1/t; α, β ≥ 0.
LineFit fit_line(const std::vector<TimedSize>& points, size_t begin, size_t end, double factor) {
  const size_t n = end - begin;
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd t(n);
  for (size_t i = 0; i < n; ++i) {
    const TimedSize& p = points[begin + i];
    a(i, 0) = 1.0 / p.seconds;
    a(i, 1) = factor * p.bytes / p.seconds;
    t(i) = 1.0;
  }
  Eigen::Vector2d solution = a.colPivHouseholderQr().solve(t);
  LineFit fit{solution(0), solution(1), 0};
  if (fit.alpha < 0 || fit.beta <= 0) {
    // Refit with the offending term pinned: bandwidth only, or latency only.
    if (fit.beta <= 0) {
      fit.beta = 1e-15;
      fit.alpha = a.col(0).dot(t - a.col(1) * fit.beta) / a.col(0).squaredNorm();
    } else {
      fit.alpha = 0;
      fit.beta = a.col(1).dot(t) / a.col(1).squaredNorm();
    }
    fit.alpha = std::max(fit.alpha, 0.0);
  }
  for (size_t i = 0; i < n; ++i) {
    const double r = a(i, 0) * fit.alpha + a(i, 1) * fit.beta - 1.0;
    fit.cost += r * r;
  }
  return fit;
}

LinkSegment segment(const LineFit& fit, double max_bytes) {
  return {max_bytes, fit.alpha * 1e6, 1.0 / fit.beta / 1e9};
}

}  // namespace

std::vector<LinkSegment> fit_segments(CollectiveOp op, int64_t group_size,
                                      const std::vector<TimedSize>& input) {
  std::vector<TimedSize> points = input;
  std::sort(points.begin(), points.end(),
            [](const TimedSize& a, const TimedSize& b) { return a.bytes < b.bytes; });
  const double factor = bus_factor(op, group_size);
  const double last = std::numeric_limits<double>::infinity();
  const LineFit whole = fit_line(points, 0, points.size(), factor);
  constexpr size_t kMinPoints = 3;
  double best_cost = whole.cost;
  size_t best_split = 0;
  for (size_t split = kMinPoints; split + kMinPoints <= points.size(); ++split) {
    const double cost = fit_line(points, 0, split, factor).cost + fit_line(points, split, points.size(), factor).cost;
    if (cost < best_cost) best_cost = cost, best_split = split;
  }
  // One line unless it misses by more than 5% RMS and two lines halve that.
  const double rms = std::sqrt(whole.cost / double(points.size()));
  if (best_split == 0 || rms < 0.05 || best_cost > 0.5 * whole.cost) return {segment(whole, last)};
  return {segment(fit_line(points, 0, best_split, factor), points[best_split - 1].bytes),
          segment(fit_line(points, best_split, points.size(), factor), last)};
}

double predicted_seconds(const std::vector<LinkSegment>& segments, CollectiveOp op,
                         int64_t group_size, double bytes) {
  for (const LinkSegment& s : segments) {
    if (bytes <= s.max_bytes || &s == &segments.back()) {
      return s.alpha_us * 1e-6 + bus_factor(op, group_size) * bytes / (s.bus_bandwidth_GBps * 1e9);
    }
  }
  return 0;
}

}  // namespace axo::calibration
