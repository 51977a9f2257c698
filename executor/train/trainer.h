// The single-rank training loop: gradient accumulation over microbatches,
// global-norm clipping, AdamW with warm-up and cosine decay, validation,
// checkpoints with exact resume, per-step logs and run.json.
#pragma once

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "executor/gpt/gpt.h"
#include "model/transformer_spec.h"

namespace axo {

struct TrainOptions {
  std::string data;            // glob of training shards
  std::string val_data;        // glob of validation shards (optional)
  int64_t steps = 100;         // the run's length (sets the learning-rate schedule)
  int64_t stop_after = 0;      // stop this invocation at this step (a job's time budget); 0: run to `steps`
  int64_t batch = 8;           // sequences per step
  int64_t microbatch = 8;      // sequences per forward/backward
  int64_t seq = 0;             // 0: the model's sequence length
  double lr = 3e-4;
  double min_lr_fraction = 0.1;  // cosine decays to lr · this
  int64_t warmup = 0;          // steps of linear warm-up
  double weight_decay = 0.1;   // on matrices only
  double grad_clip = 1.0;      // global gradient norm; 0 turns clipping off
  uint64_t seed = 1337;
  int64_t val_every = 0;       // steps between validations; 0: none
  int64_t val_batches = 4;
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool resume = false;
  std::string init_from;       // llm.c model file
  std::string run_json;        // measured breakdown per step
  std::string save_model;      // llm.c model file written at the end
};

struct StepRecord {
  int64_t step = 0;            // 1-based
  double loss = 0, lr = 0, grad_norm = 0;
  double seconds = 0, tokens_per_s = 0, gflops = 0;
  OpTimes ops;
  double optimizer_s = 0;
  double val_loss = -1;        // negative when not validated this step
};

class Trainer {
 public:
  // Checks the options against the model; InputError on a mistake.
  Trainer(const TransformerSpec& spec, TrainOptions options, std::ostream& log);
  // Runs to options.steps (from a checkpoint with resume); returns every step run.
  std::vector<StepRecord> run();
  Gpt& model() { return model_; }
  // The learning rate of 0-based step s.
  double learning_rate(int64_t s) const;

 private:
  void apply_adamw(int64_t step, double lr);
  double clip_gradients();
  double validate();
  void write_run_json(const std::vector<StepRecord>& records) const;

  TransformerSpec spec_;
  TrainOptions o_;
  std::ostream& log_;
  Gpt model_;
  std::vector<float> m_, v_;
  std::mt19937_64 rng_;
  int64_t T_ = 0;
};

}  // namespace axo
