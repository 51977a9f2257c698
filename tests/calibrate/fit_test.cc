// Fits recover known latency and bandwidth, and find a bend.
#include "calibrate/fit.h"

#include <gtest/gtest.h>

namespace axo::calibration {
namespace {

TEST(Fit, RecoversAlphaAndBandwidth) {
  // all-reduce over 4 ranks: t = 20 µs + 1.5·S / 10 GB/s.
  std::vector<TimedSize> points;
  for (double bytes = 64; bytes <= (64 << 20); bytes *= 4) points.push_back({bytes, 20e-6 + 1.5 * bytes / 10e9});
  const auto segments = fit_segments(CollectiveOp::all_reduce, 4, points);
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_NEAR(segments[0].alpha_us, 20, 0.01);
  EXPECT_NEAR(segments[0].bus_bandwidth_GBps, 10, 0.001);
  for (const TimedSize& p : points) {
    EXPECT_NEAR(predicted_seconds(segments, CollectiveOp::all_reduce, 4, p.bytes) / p.seconds, 1, 1e-6);
  }
}

TEST(Fit, SplitsWhereTheCurveBends) {
  // Eager protocol up to 64 KiB (5 µs, 2 GB/s), then rendezvous (40 µs, 12 GB/s).
  std::vector<TimedSize> points;
  for (double bytes = 256; bytes <= (16 << 20); bytes *= 2) {
    const double t = bytes <= 65536 ? 5e-6 + bytes / 2e9 : 40e-6 + bytes / 12e9;
    points.push_back({bytes, t});
  }
  const auto segments = fit_segments(CollectiveOp::send_recv, 2, points);
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_DOUBLE_EQ(segments[0].max_bytes, 65536);
  EXPECT_NEAR(segments[0].bus_bandwidth_GBps, 2, 0.01);
  EXPECT_NEAR(segments[1].bus_bandwidth_GBps, 12, 0.05);
  for (const TimedSize& p : points) {
    EXPECT_NEAR(predicted_seconds(segments, CollectiveOp::send_recv, 2, p.bytes) / p.seconds, 1, 1e-3);
  }
}

TEST(Fit, NeverNegative) {
  // Noisy, flat times: the fit must keep α ≥ 0 and a positive bandwidth.
  std::vector<TimedSize> points = {{64, 9e-6}, {128, 8e-6}, {256, 10e-6}, {512, 9e-6}, {1024, 8.5e-6}};
  const auto segments = fit_segments(CollectiveOp::all_gather, 2, points);
  for (const LinkSegment& s : segments) {
    EXPECT_GE(s.alpha_us, 0);
    EXPECT_GT(s.bus_bandwidth_GBps, 0);
  }
}

}  // namespace
}  // namespace axo::calibration
