// The planner's table of configurations as CSV (for scripts) and JSON.
//
// One row per configuration, ranked; the columns are plan_table_columns():
// the configuration, then iteration time, TFLOP/s per GPU, % of peak, memory
// per GPU (GiB) and whether it fits, then the seconds of each component of
// the breakdown (t_compute_s ... t_optimizer_s) and memory by kind, then
// goodput and checkpoint_interval_s (model/goodput.h), train_days and
// gpu_hours when the rows have a token budget and cost when a price, and the
// variants folded into each row (row_folding.h). CSV quoting is libcsv's;
// JSON is nlohmann-json's.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "planner/search.h"

namespace axo {

const std::vector<std::string>& plan_table_columns();

// Ranks are 1-based positions in `rows`.
std::string plan_table_csv(const std::vector<PlanRow>& rows);
void write_plan_csv(const std::vector<PlanRow>& rows, const std::string& path);
// Throws InputError naming the file, line and column on a malformed table.
std::vector<PlanRow> read_plan_csv(const std::string& path);
// Same, from text already in memory; `source` names it in messages.
std::vector<PlanRow> plan_rows_from_csv(const std::string& text, const std::string& source);

nlohmann::ordered_json plan_rows_to_json(const std::vector<PlanRow>& rows);
std::vector<PlanRow> plan_rows_from_json(const nlohmann::json& rows, const std::string& source);

}  // namespace axo
