// The GPT trained by one rank of a 4D-parallel plan: its shards of the
// parameters (shard_layout.h), its pipeline stage (gpt_stage.h), the
// schedule that runs the stage's microbatches (pipeline_schedule.h), the
// gradient reductions that follow, and the optimizer on the shards.
//
// Every operation is collective over the world; the results (loss, norm,
// gathered tensors) are the same on every rank.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "executor/parallel/gpt_stage.h"
#include "executor/parallel/phase_times.h"
#include "executor/parallel/pipeline_schedule.h"
#include "executor/parallel/process_grid.h"
#include "executor/parallel/shard_layout.h"

namespace axo {

struct ParallelOptions {
  ScheduleOptions schedule;
  Overlap overlap;  // OAR, ORS and OAG in the tensor-parallel layers
  Recompute recompute = Recompute::none;
  int64_t seq = 0;  // tokens per sequence, for balancing the stages; 0: the model's
};

class ParallelGpt {
 public:
  // InputError when the plan cannot run this model (what does not divide what).
  ParallelGpt(const GptShape& shape, const ProcessGrid& grid, const ParallelOptions& options);

  const ShardLayout& layout() const { return *layout_; }
  const ProcessGrid& grid() const { return grid_; }
  std::vector<float>& parameters() { return parameters_; }
  const std::vector<float>& parameters() const { return parameters_; }
  std::vector<float>& gradients() { return gradients_; }
  PhaseTimes& times() { return times_; }

  // Takes this rank's shards of a full parameter vector (llm.c layout).
  void load(const std::vector<float>& full);
  // The full vector (llm.c layout) of a local one (parameters, gradients or
  // optimizer moments), on every rank.
  std::vector<float> gather(const std::vector<float>& local) const;

  // Forward and backward of this data replica's batch, inputs and targets
  // [sequences·T] in microbatches of `microbatch` sequences; afterwards every
  // rank holds the gradient of the global batch's mean loss for its shards.
  // Returns that loss.
  double forward_backward(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch);
  // Mean loss of the global batch, forward only.
  double evaluate(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch);
  // The global gradient norm; scales the gradients to max_norm when above it (0: never).
  double clip_gradients(double max_norm);
  // AdamW step `step` (1-based) on the shards, decaying matrices only;
  // m and v are local like the parameters.
  void adamw(long step, double lr, double weight_decay, std::vector<float>& m, std::vector<float>& v);

 private:
  double global_loss(double tokens);
  const ProcessGrid& grid_;
  ParallelOptions options_;
  std::unique_ptr<ShardLayout> layout_;
  std::vector<float> parameters_, gradients_;
  PhaseTimes times_;
  std::unique_ptr<GptStage> stage_;
};

}  // namespace axo
