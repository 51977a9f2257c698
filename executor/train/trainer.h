// The training loop, on one rank or on every rank of a 4D-parallel plan:
// global-norm clipping, AdamW with warm-up and a cosine, linear or constant
// rate (lr_schedule.h), validation,
// checkpoints with exact resume, per-step logs and run.json.
//
// Every rank runs the same loop over its shards (parallel/parallel_gpt.h);
// world rank 0 logs and writes the files. Checkpoints and model files hold
// the full model in llm.c's layout, so a run may resume on another grid.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "executor/comm/communicator.h"
#include "executor/data/token_shards.h"
#include "executor/parallel/parallel_gpt.h"
#include "executor/train/checkpoint.h"
#include "executor/train/loss_scaler.h"
#include "executor/train/lr_schedule.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

struct TrainOptions {
  std::string data;            // glob of training shards
  std::string val_data;        // glob of validation shards (optional)
  int64_t steps = 100;         // the run's length (sets the learning-rate schedule)
  int64_t stop_after = 0;      // stop this invocation at this step, checkpointed (a job's time budget); 0: run to `steps`
  int64_t batch = 8;           // sequences per step, over all data-parallel replicas
  int64_t microbatch = 8;      // sequences per forward/backward of one replica
  int64_t seq = 0;             // 0: the model's sequence length
  double lr = 3e-4;            // peak; 0: evaluation only (nothing changes)
  LrSchedule lr_schedule = LrSchedule::cosine;  // lr_schedule.h
  double min_lr_fraction = 0.1;  // cosine and linear decay to lr · this
  int64_t warmup = 0;          // steps of linear warm-up
  double weight_decay = 0.1;   // on matrices only
  double grad_clip = 1.0;      // global gradient norm; 0 turns clipping off
  uint64_t seed = 1337;
  int64_t val_every = 0;       // steps between validations; 0: none
  int64_t val_batches = 4;     // batches of `batch` sequences each validation averages over
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool resume = false;
  std::string init_from;       // llm.c model file
  std::string run_json;        // measured breakdown per step
  std::string save_model;      // llm.c model file written at the end
  ParallelConfig grid;         // the plan's grid and options, offload included (its microbatch is not used: see above)
  int64_t device_memory = 0;   // each rank's device memory limit in bytes; 0: none
  int optimizer_threads = 1;   // AdamW's threads per rank
  Precision precision = Precision::fp32;  // fp32, bf16 or fp16 (parallel_gpt.h: what runs in 2 bytes)
  std::optional<Precision> planned_precision;  // the plan's fp8 where `precision` stands in for it
  ScheduleOptions schedule;
  std::optional<Overlap> overlap;  // each of OAR, ORS, OAG; default: all as the plan's `overlap`
  // The node this rank runs on, recorded in run.json (`node`) so a report can
  // say when ranks shared cores; 0 cores: not known (no `node` is written).
  int node_ranks = 1;
  int node_cores = 0;
  // Testing only: world rank `kill_rank` sends itself SIGKILL in the middle of step `kill_step` (1-based).
  int kill_rank = -1;
  int64_t kill_step = 0;
  // Dynamic loss scaling (loss_scaler.h): a step with an inf or NaN gradient on any rank is skipped on all.
  bool loss_scaling = false;
  // Testing only: world rank `overflow_rank` makes a gradient +inf in step `overflow_step` (1-based).
  int overflow_rank = -1;  // with or without loss scaling (without it, training stops before the update)
  int64_t overflow_step = 0;
};

struct StepRecord {
  int64_t step = 0;            // 1-based
  double loss = 0, lr = 0, grad_norm = 0;
  double seconds = 0, tokens_per_s = 0, gflops = 0;
  PhaseTimes times;            // this rank's
  // Every rank's components (kComponentNames), its tensor-parallel time by
  // kind (all-gather, all-reduce, reduce-scatter) and its step seconds; on
  // world rank 0 only.
  std::vector<std::array<double, 11>> ranks;
  double val_loss = -1;        // negative when not validated this step
};

struct RankMemory;  // executor/train/run_json_writer.h

class Trainer {
 public:
  // Checks the options against the model and the grid against `world`;
  // InputError on a mistake. Collective over `world`, which must outlive it.
  Trainer(const TransformerSpec& spec, TrainOptions options, Communicator& world, std::ostream& log);
  // Runs to options.steps (from a checkpoint with resume); returns every step run.
  std::vector<StepRecord> run();
  // The full parameters in llm.c's layout (collective).
  std::vector<float> parameters() const { return model_.gathered_master_weights(); }
  // The learning rate of 0-based step s.
  double learning_rate(int64_t s) const;

 private:
  double validate();
  int64_t whole_validation_batches(const TokenStream& val) const;
  bool writes_checkpoints() const;
  int64_t last_step() const;      // the last step this invocation runs: --stop-after's, else --steps
  void check_faults_fire() const;  // an injected fault on a rank and step this run has
  int64_t replica_batch() const;  // sequences per step of one data-parallel replica
  // Loads the newest good checkpoint (--resume); returns its step.
  int64_t resume(TokenStream& data, std::ostream& log);
  std::optional<TrainingState> load_agreed_checkpoint(std::ostream& log);
  void check_resumable(const TrainingState& state, const std::string& path, const TokenStream& data) const;
  RunSettings run_settings(const TokenStream& data) const;  // what a checkpoint keeps of this run's options
  void save_checkpoint(int64_t step, const TokenStream& data);
  void gather_rank_breakdowns(StepRecord& r) const;
  std::string step_line(const StepRecord& r) const;
  // Loss scaling after backward: unscales the gradients, or (an inf or NaN on some rank) says to skip the step.
  bool step_is_clean(int64_t step, std::ostream& log);
  void stop_before_a_non_finite_update(const StepRecord& record) const;
  // Every rank's device memory (peak by use) and host memory, on world rank 0.
  std::vector<RankMemory> gather_memory() const;
  void write_run_json(const std::vector<StepRecord>& records, const std::vector<RankMemory>& memory) const;
  void log_memory(const std::vector<RankMemory>& memory, std::ostream& log) const;
  bool leader() const { return world_.rank() == 0; }

  TransformerSpec spec_;
  TrainOptions o_;
  Communicator& world_;
  std::ostream& log_;
  int64_t T_ = 0;
  ProcessGrid grid_;
  ParallelGpt model_;
  std::mt19937_64 rng_;
  LossScaler scaler_;
  int64_t val_batches_ = 0;  // whole_validation_batches(), with --val-every
};

}  // namespace axo
