// Fitting measured collective times to time = α + f·S/B (comm_model.h),
// piecewise where the curve bends (protocol switches, cache sizes).
//
// Least squares on relative error (each point weighted by 1/time², so a
// 10 µs message counts as much as a 10 ms one), solved with Eigen. A second
// segment is taken where one line misses by more than 5% RMS and splitting
// the sizes in two halves the error.
#pragma once

#include <vector>

#include "model/machine_profile.h"

namespace axo::calibration {

struct TimedSize {
  double bytes = 0;
  double seconds = 0;
};

// Segments for `op` over `group_size` ranks, in increasing max_bytes.
std::vector<LinkSegment> fit_segments(CollectiveOp op, int64_t group_size,
                                      const std::vector<TimedSize>& points);

// The time the segments predict for `bytes`.
double predicted_seconds(const std::vector<LinkSegment>& segments, CollectiveOp op,
                         int64_t group_size, double bytes);

}  // namespace axo::calibration
