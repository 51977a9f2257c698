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
  // What was published: an iteration time, or one layer's forward and
  // backward time (ms, backward with recomputation), or both.
  double measured_s = 0;
  double measured_layer_forward_ms = 0;
  double measured_layer_backward_ms = 0;
};

struct ValidationSet {
  std::string name;
  std::string source;   // the publication
  std::string machine;  // the machine preset all points use
  std::vector<ValidationPoint> points;
};

// One compared quantity of one point.
struct ValidationResult {
  const ValidationPoint* point = nullptr;
  std::string quantity;  // "iteration (s)", "layer forward (ms)", "layer backward (ms)"
  double measured = 0;
  double predicted = 0;
  double error_pct = 0;  // 100·(predicted − measured)/measured
};

ValidationSet load_validation_set(const std::string& path);
// Throws InputError when a point's configuration does not fit its model.
std::vector<ValidationResult> run_validation(const ValidationSet& set, const MachineProfile& machine);

}  // namespace axo
