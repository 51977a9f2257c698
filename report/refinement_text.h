// A refinement for people: each factor with the profile fields it changed,
// then the error before and after, overall and run by run.
//
//   factor    value  profile
//   gemm     0.8500  gemm.max_efficiency 0.84 -> 0.714
//   network  1.0000  (no run depends on it: unchanged)
//   ...
//   RMS relative component error: 35.20% before, 0.10% after
//   run1.json: iteration error -12.1% before, +0.1% after
#pragma once

#include <string>
#include <vector>

#include "report/profile_refinement.h"

namespace axo {

// `before` is the profile that was refined; `labels` name the cases in order.
std::string refinement_text(const RefinementResult& result, const MachineProfile& before,
                            const std::vector<std::string>& labels);

}  // namespace axo
