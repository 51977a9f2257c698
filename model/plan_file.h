// plan.yaml: the configuration the planner chose, with everything needed to
// run it (the model spec, the GPU count) and what the planner predicted for
// it, so `axo train` runs exactly the plan and `axo report` can compare.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "model/breakdown.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

struct Plan {
  TransformerSpec model;
  std::string machine;  // the profile's name
  int64_t gpus = 0;
  ParallelConfig config;
  Breakdown predicted;
  // The prediction's error band as `axo plan` printed it (planner/prediction_band.h): where the
  // measured iteration time of published runs on this GPU type fell about their predictions
  // (0 and 0 without a band), and its text, or why there is none. Empty where not written.
  double iter_time_low_s = 0, iter_time_high_s = 0;
  std::string band;
};

// Writes atomically (temporary file, flush, rename).
void write_plan_file(const Plan& plan, const std::string& path);
// Throws InputError with file, line and field on a malformed plan, or when
// the grid's product is not the plan's GPU count.
Plan read_plan_file(const std::string& path);
// Same, from a parsed document; `source` names it in messages.
Plan plan_from_yaml(const YAML::Node& root, const std::string& source);

}  // namespace axo
