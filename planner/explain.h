// `axo plan --explain`: where the time of one configuration goes, GEMM by
// GEMM and collective by collective, with group, size, bandwidth and the
// exposed part of each.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "model/cost_model.h"

namespace axo {

// A table for people: one line per item, grouped by scope and phase, then
// the breakdown's components and memory.
std::string explain_text(const CostModel& model, const ParallelConfig& config);
nlohmann::ordered_json explain_json(const CostModel& model, const ParallelConfig& config);

}  // namespace axo
