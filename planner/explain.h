// `axo plan --explain`: where the time of one configuration goes, GEMM by
// GEMM and collective by collective, with group, size, bandwidth and the
// exposed part of each.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "model/cost_model.h"
#include "planner/prediction_band.h"

namespace axo {

// A table for people: one line per item, grouped by scope and phase, then
// the breakdown's components and memory.
std::string explain_text(const CostModel& model, const ParallelConfig& config);
nlohmann::ordered_json explain_json(const CostModel& model, const ParallelConfig& config);

// The error band's line, e.g. "Error band: 17.1432 s, measured 16.1 to 18.7 s
// (-6% / +9%: 90% of 84 published H100-80 runs)", or why there is none.
std::string band_explain_text(double iter_time_s, const PredictionBand& band);

}  // namespace axo
