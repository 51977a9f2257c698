// `axo validate`: the cost model's predictions against published
// measurements (configs/validation/*.yaml, each point with its source).
#pragma once

#include <string>
#include <vector>

#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

struct ValidationPoint {
  std::string name;
  TransformerSpec model;
  int64_t gpus = 0;
  ParallelConfig config;
  double measured_s = 0;  // published iteration time
};

struct ValidationSet {
  std::string name;
  std::string source;   // the publication
  std::string machine;  // the machine preset all points use
  std::vector<ValidationPoint> points;
};

struct ValidationResult {
  const ValidationPoint* point = nullptr;
  double predicted_s = 0;
  double error_pct = 0;  // 100·(predicted − measured)/measured
};

ValidationSet load_validation_set(const std::string& path);
// Throws InputError when a point's configuration does not fit its model.
std::vector<ValidationResult> run_validation(const ValidationSet& set, const MachineProfile& machine);

}  // namespace axo
