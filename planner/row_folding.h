// Configurations a user cannot tell apart: every number of their rows is
// equal (iteration time and each component, TFLOP/s, memory by kind), e.g.
// overlap on and off where nothing overlaps, or two rank orders whose
// groups cost the same. The ranked table shows the first found once and
// names the others, so its top K are K different plans.
#pragma once

#include <string>
#include <vector>

#include "model/breakdown.h"
#include "model/parallel_config.h"

namespace axo {

// Equal to 1 part in 1e12 (the same arithmetic in another order).
bool same_numbers(const Breakdown& a, const Breakdown& b);

// The fields of `variant` that differ from `shown`, e.g. "overlap=off" or
// "order=yxzdp,overlap=off".
std::string variant_text(const ParallelConfig& shown, const ParallelConfig& variant);

// Every variant of a shown row, "; "-separated ("" when none).
std::string variants_text(const ParallelConfig& shown, const std::vector<ParallelConfig>& variants);

}  // namespace axo
