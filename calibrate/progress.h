// What `axo calibrate` says while it measures the collectives: which pair of
// collective and group shape out of how many, and the message size it is at
// among the sizes it sweeps, e.g.
//   calibrate [3/12] all_gather, groups of 4 (stride 1): 1.00 MiB (size 19 of 25, 4 B to 64.00 MiB)
// The count runs over the pairs it measures (send/receive only between two
// ranks), so it ends at the total.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "calibrate/group_shapes.h"
#include "model/machine_profile.h"

namespace axo::calibration {

// Whether calibrate measures `op` on groups of this shape.
bool measures(CollectiveOp op, const GroupShape& shape);
// How many (shape, op) pairs it measures.
size_t measured_pairs(const std::vector<GroupShape>& shapes, const std::vector<CollectiveOp>& ops);

// `done`: 1-based number of the pair; `index`: 0-based position in `sizes`.
std::string collective_progress(size_t done, size_t total, CollectiveOp op, const GroupShape& shape,
                                const std::vector<double>& sizes, size_t index);

}  // namespace axo::calibration
