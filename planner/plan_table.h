// The planner's table of configurations: printed, as CSV (for scripts) and
// as JSON.
//
// One row per configuration, ranked; the columns are plan_table_columns():
// the rank, the configuration's fields (model/config_fields.h), then
// iteration time, TFLOP/s per GPU, % of peak, memory per GPU (GiB) and
// whether it fits, the seconds of each component of the breakdown
// (t_compute_s ... t_optimizer_s), the fields added later
// (sequence_parallel), memory by kind, the error band's iter_time_low_s and
// iter_time_high_s (when the rows have one), then goodput and
// checkpoint_interval_s (model/goodput.h), train_days and gpu_hours when the
// rows have a token budget and cost when a price (optional columns: a table
// has them when its first row does), and the variants folded into each row
// (row_folding.h). The result columns are declared
// once in plan_table.cc (name, how to read it from a Breakdown and back, how
// it is printed): a new output column is one entry there, used by all three
// forms. CSV quoting is libcsv's; JSON is nlohmann-json's.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "planner/search.h"

namespace axo {

// Every declared column, the optional ones included.
const std::vector<std::string>& plan_table_columns();

// Ranks are 1-based positions in `rows`.
// The table for a terminal: a header line, then one line per row.
std::string plan_table_text(const std::vector<PlanRow>& rows);
std::string plan_table_csv(const std::vector<PlanRow>& rows);
void write_plan_csv(const std::vector<PlanRow>& rows, const std::string& path);
// Throws InputError naming the file, line and column on a malformed table.
std::vector<PlanRow> read_plan_csv(const std::string& path);
// Same, from text already in memory; `source` names it in messages.
std::vector<PlanRow> plan_rows_from_csv(const std::string& text, const std::string& source);

nlohmann::ordered_json plan_rows_to_json(const std::vector<PlanRow>& rows);
std::vector<PlanRow> plan_rows_from_json(const nlohmann::json& rows, const std::string& source);

}  // namespace axo
