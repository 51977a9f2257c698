// Calibrate's progress lines (see progress.h).
#include "calibrate/progress.h"

#include <cstdio>

#include "model/byte_size.h"

namespace axo::calibration {

bool measures(CollectiveOp op, const GroupShape& shape) {
  return op != CollectiveOp::send_recv || shape.size == 2;
}

size_t measured_pairs(const std::vector<GroupShape>& shapes, const std::vector<CollectiveOp>& ops) {
  size_t pairs = 0;
  for (const GroupShape& shape : shapes) {
    for (CollectiveOp op : ops) pairs += measures(op, shape) ? 1 : 0;
  }
  return pairs;
}

std::string collective_progress(size_t done, size_t total, CollectiveOp op, const GroupShape& shape,
                                const std::vector<double>& sizes, size_t index) {
  char text[256];
  std::snprintf(text, sizeof text, "calibrate [%zu/%zu] %s, groups of %lld (stride %lld): %s (size %zu of %zu, %s to %s)",
                done, total, to_string(op), (long long)shape.size, (long long)shape.stride,
                format_bytes(sizes[index]).c_str(), index + 1, sizes.size(), format_bytes(sizes.front()).c_str(),
                format_bytes(sizes.back()).c_str());
  return text;
}

}  // namespace axo::calibration
