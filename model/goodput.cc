// Goodput and time to train (see goodput.h for the formulas and sources).
#include "model/goodput.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "model/memory_model.h"

namespace axo {

double checkpoint_state_bytes(const TransformerSpec& spec, const ParallelConfig& config) {
  const double optimizer = spec.precision == Precision::fp32 ? 8 : 12;
  const double per_param = double(bytes_per_element(spec.precision)) + optimizer;
  // Every stage's own (its middle stages had been priced at layers / pipeline each, rounded down:
  // 1552 GiB of gpt3-175b's 2285 over 64 stages of 1 or 2); without splitting the layers, which
  // `--rank-by cost` did for every configuration it priced (9 of an exhaustive search's 11 s).
  return double(pipeline_params(spec, config)) * per_param;
}

namespace {

double mtbf_seconds(int64_t gpus, const MachineProfile& machine) {
  return 3600.0 / (machine.failures_per_gpu_hour * double(gpus));
}

}  // namespace

Goodput goodput(double state_bytes, double iteration_s, int64_t gpus, const MachineProfile& machine) {
  Goodput g;
  const double bandwidth = machine.checkpoint_filesystem_GBps * 1e9;
  g.mtbf_s = mtbf_seconds(gpus, machine);
  g.checkpoint_write_s = state_bytes / bandwidth;
  g.restart_s = machine.restart_s + state_bytes / bandwidth;
  const double young = std::sqrt(2 * g.checkpoint_write_s * g.mtbf_s);
  g.checkpoint_interval_s = std::max(1.0, std::round(young / iteration_s)) * iteration_s;
  const double segment = g.checkpoint_interval_s + g.checkpoint_write_s;
  const double lost = (g.restart_s + segment / 2) / g.mtbf_s;
  g.goodput = std::max(0.0, g.checkpoint_interval_s / segment * (1 - lost));
  return g;
}

std::string no_progress_reason(const Goodput& g, int64_t gpus, const MachineProfile& machine) {
  if (g.goodput > 0) return "";
  char text[400];
  std::snprintf(text, sizeof text,
                "the job on %lld GPUs fails every %.0f s on average (failures_per_gpu_hour %g), and each "
                "failure costs %.0f s (restart_s %g and reading the checkpoint back) plus half of a "
                "%.0f s checkpoint interval and write: no work survives (goodput 0)",
                (long long)gpus, g.mtbf_s, machine.failures_per_gpu_hour, g.restart_s, machine.restart_s,
                g.checkpoint_interval_s + g.checkpoint_write_s);
  return text;
}

double goodput_upper_bound(int64_t gpus, const MachineProfile& machine) {
  return std::max(0.0, 1 - machine.restart_s / mtbf_seconds(gpus, machine));
}

TrainingTime time_to_train(double tokens, double tokens_per_iteration, double iteration_s,
                           double goodput, int64_t gpus, double gpu_hour_price) {
  TrainingTime t;
  t.iterations = std::ceil(tokens / tokens_per_iteration);
  t.ideal_s = t.iterations * iteration_s;
  const double wall_s = goodput > 0 ? t.ideal_s / goodput : std::numeric_limits<double>::infinity();
  t.train_days = wall_s / 86400;
  t.gpu_hours = double(gpus) * wall_s / 3600;
  t.cost = t.gpu_hours * gpu_hour_price;
  return t;
}

TrainingEstimate estimate_training(const TransformerSpec& spec, const MachineProfile& machine,
                                   int64_t gpus, const ParallelConfig& config, double iteration_s,
                                   const TokenBudget& budget) {
  TrainingEstimate e;
  e.goodput = goodput(checkpoint_state_bytes(spec, config), iteration_s, gpus, machine);
  e.has_time = budget.tokens > 0;
  e.has_cost = e.has_time && budget.gpu_hour_price > 0;
  if (e.has_time) {
    const double tokens_per_iteration = double(spec.global_batch) * double(spec.seq_len);
    e.time = time_to_train(budget.tokens, tokens_per_iteration, iteration_s, e.goodput.goodput, gpus,
                           budget.gpu_hour_price);
  }
  return e;
}

}  // namespace axo
