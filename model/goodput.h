// Goodput under failures and checkpoints, and the time, GPU-hours and cost of
// training on a token budget.
//
// Failures: each GPU interrupts the whole job at `failures_per_gpu_hour` (the
// machine profile; by default Llama 3's 419 unexpected interruptions in 54
// days on 16,384 H100, arXiv 2407.21783 §3.3.4), so a job on N GPUs sees one
// every M = 3600 / (λ·N) seconds on average.
// Checkpoints: the job writes its model state, one copy of every weight and
// of the optimizer state (data-parallel replicas hold copies), in
// C = state bytes / filesystem bandwidth; after a failure it restarts in
// R = restart_s + state bytes / filesystem bandwidth (reading it back).
// Interval: Young's optimum τ = √(2·C·M) of work between checkpoints (Young
// 1974; Daly 2006 shows it is the first-order optimum), rounded to whole
// iterations, at least one.
// Goodput, first order as in Daly 2006: of every τ + C seconds, τ do work;
// each failure (one per M seconds) costs R and on average half a segment:
//   goodput = τ / (τ + C) · (1 − (R + (τ + C) / 2) / M), at least 0.
// Time to train: iterations = ⌈tokens / (batch · sequence)⌉, the ideal time
// iterations · iteration time, train_days = ideal / goodput / 86,400 s,
// gpu_hours = N · train_days · 24, cost = gpu_hours · price per GPU-hour.
#pragma once

#include <cstdint>
#include <string>

#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

// Bytes of one copy of the weights and optimizer state a configuration holds:
// every stage's parameters (a tied embedding's second copy on the last stage
// included) at the weights' precision plus the optimizer's fp32 master
// weights and Adam moments (12 bytes; 8 in fp32), offloaded or not.
double checkpoint_state_bytes(const TransformerSpec& spec, const ParallelConfig& config);

struct Goodput {
  double mtbf_s = 0;                 // M: mean time between failures of the job
  double checkpoint_write_s = 0;     // C
  double restart_s = 0;              // R: restart and read the checkpoint back
  double checkpoint_interval_s = 0;  // τ: work between checkpoints, whole iterations
  double goodput = 0;                // fraction of wall time that trains
};

Goodput goodput(double state_bytes, double iteration_s, int64_t gpus, const MachineProfile& machine);

// Why a goodput of 0 makes no progress, in the job's own numbers: a failure on average every M
// seconds, and each costs R plus half a segment or more ("" when the goodput is above 0).
std::string no_progress_reason(const Goodput& g, int64_t gpus, const MachineProfile& machine);

// An upper bound on the goodput of any configuration on `gpus` GPUs (for
// pruning): 1 − restart_s / M, since R ≥ restart_s and τ / (τ + C) ≤ 1.
double goodput_upper_bound(int64_t gpus, const MachineProfile& machine);

struct TrainingTime {
  double iterations = 0;
  double ideal_s = 0;     // iterations · iteration time, without failures
  double train_days = 0;  // ideal / goodput (infinite when goodput is 0)
  double gpu_hours = 0;
  double cost = 0;        // gpu_hours · price
};

TrainingTime time_to_train(double tokens, double tokens_per_iteration, double iteration_s,
                           double goodput, int64_t gpus, double gpu_hour_price);

// What a run is planned for: a token budget (0: none) and a price per GPU-hour (0: none).
struct TokenBudget {
  double tokens = 0;
  double gpu_hour_price = 0;
};

// One configuration's goodput and, with a token budget, its time to train.
struct TrainingEstimate {
  Goodput goodput;
  bool has_time = false;   // a token budget was given
  bool has_cost = false;   // and a price
  TrainingTime time;
};

TrainingEstimate estimate_training(const TransformerSpec& spec, const MachineProfile& machine,
                                   int64_t gpus, const ParallelConfig& config, double iteration_s,
                                   const TokenBudget& budget);

}  // namespace axo
