// One rank's GPT under a 4D-parallel plan (see parallel_gpt.h).
#include "executor/parallel/parallel_gpt.h"

#include <cmath>
#include <string>

#include "executor/cpu/adamw.h"
#include "executor/timer.h"
#include "model/error.h"

namespace axo {

ParallelGpt::ParallelGpt(const GptShape& shape, const ProcessGrid& grid, const ParallelOptions& options)
    : grid_(grid), options_(options) {
  const ParallelConfig& c = grid.config();
  if (c.interleave != 1) {
    throw InputError("the executor does not run interleaved pipeline stages yet: plan with --fix interleave=1");
  }
  if (c.offload) throw InputError("the executor does not offload optimizer state yet: plan with --fix offload=off");
  const int64_t T = options.seq > 0 ? options.seq : shape.max_seq;
  layout_ = std::make_unique<ShardLayout>(shape, c, grid.coords(), partition_gpt(shape, T, c.pipeline));
  parameters_.assign(size_t(layout_->size()), 0.0f);
  gradients_.assign(size_t(layout_->size()), 0.0f);
  stage_ = std::make_unique<GptStage>(*layout_, grid, parameters_.data(), gradients_.data(), options.overlap,
                                      options.recompute, times_);
}

void ParallelGpt::load(const std::vector<float>& full) {
  if (int64_t(full.size()) != gpt_parameter_count(layout_->shape())) {
    throw std::invalid_argument("ParallelGpt::load: not a full parameter vector of this model");
  }
  layout_->scatter(full.data(), parameters_.data());
}

std::vector<float> ParallelGpt::gather(const std::vector<float>& local) const {
  std::vector<float> full(size_t(gpt_parameter_count(layout_->shape())), 0.0f);
  layout_->add_owned(local.data(), full.data());
  grid_.world().all_reduce(full.data(), full.size());
  return full;
}

double ParallelGpt::global_loss(double tokens) {
  // Each token's loss is on the last stage's ranks of every (data, z), replicated over x and over y
  // (but for sequence parallelism, where each y holds its own rows); count each once.
  const GridCoords& at = grid_.coords();
  const bool counts = grid_.last_stage() && at.x == 0 && (at.y == 0 || grid_.config().sequence_parallel);
  float sum = counts ? float(stage_->loss_sum()) : 0.0f;
  grid_.world().all_reduce(&sum, 1);
  return double(sum) / tokens;
}

double ParallelGpt::forward_backward(const int* inputs, const int* targets, int64_t sequences, int64_t T,
                                     int64_t microbatch) {
  const ParallelConfig& c = grid_.config();
  if (microbatch < 1 || sequences % microbatch != 0 || microbatch % c.z != 0) {
    throw InputError("microbatch " + std::to_string(microbatch) + ": it must divide the replica's " +
                     std::to_string(sequences) + " sequences and be divisible by z = " + std::to_string(c.z) +
                     " (Z splits a microbatch's sequences)");
  }
  const double tokens = double(sequences * T * c.data);
  std::fill(gradients_.begin(), gradients_.end(), 0.0f);
  stage_->set_batch(inputs, targets, sequences, T, microbatch, 1.0 / tokens);
  // Data-parallel buckets start reducing as soon as their gradients are final (overlapping the rest of backward).
  std::vector<RequestPtr> reductions;
  stage_->on_gradients_final([&](int64_t layer) {
    for (const GradientBucket& b : layout_->buckets()) {
      if (b.layer != layer) continue;
      Communicator& group = b.group == GradientGroup::data         ? grid_.data()
                            : b.group == GradientGroup::z_and_data ? grid_.z_and_data()
                                                                   : grid_.y_z_and_data();
      if (group.size() == 1) continue;
      timed(times_.dp_comm, [&] { reductions.push_back(group.start_all_reduce(gradients_.data() + b.offset, size_t(b.size))); });
    }
  });
  run_pipeline(*stage_, grid_, sequences / microbatch, options_.schedule, times_);
  timed(times_.dp_comm, [&] {
    for (RequestPtr& r : reductions) r->wait();
    // The tied embedding: the first stage's gradient (lookup) plus the last's (head).
    if (Communicator* embedding = grid_.embedding()) {
      for (const LocalTensor& t : layout_->tensors()) {
        if (t.tied) embedding->all_reduce(gradients_.data() + t.offset, size_t(t.size));
      }
    }
  });
  double loss = 0;
  timed(times_.optimizer, [&] { loss = global_loss(tokens); });
  return loss;
}

double ParallelGpt::evaluate(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch) {
  const ParallelConfig& c = grid_.config();
  const double tokens = double(sequences * T * c.data);
  stage_->set_batch(inputs, targets, sequences, T, microbatch, 1.0 / tokens);
  PhaseTimes ignored;
  run_forward_only(*stage_, grid_, sequences / microbatch, ignored);
  return global_loss(tokens);
}

double ParallelGpt::clip_gradients(double max_norm) {
  double norm = 0;
  timed(times_.optimizer, [&] {
    double local = 0;
    for (const LocalTensor& t : layout_->tensors()) {
      if (!t.owned) continue;
      for (int64_t i = 0; i < t.size; ++i) local += double(gradients_[size_t(t.offset + i)]) * gradients_[size_t(t.offset + i)];
    }
    float sum = float(local);
    grid_.world().all_reduce(&sum, 1);
    norm = std::sqrt(double(sum));
    if (max_norm > 0 && norm > max_norm) {
      const float scale = float(max_norm / norm);
      for (float& g : gradients_) g *= scale;
    }
  });
  return norm;
}

void ParallelGpt::adamw(long step, double lr, double weight_decay, std::vector<float>& m, std::vector<float>& v) {
  timed(times_.optimizer, [&] {
    for (const LocalTensor& t : layout_->tensors()) {
      cpu::AdamWSettings settings;
      settings.learning_rate = float(lr);
      settings.weight_decay = t.decayed ? float(weight_decay) : 0.0f;
      const size_t o = size_t(t.offset);
      cpu::adamw_update(parameters_.data() + o, gradients_.data() + o, m.data() + o, v.data() + o, size_t(t.size),
                        settings, step);
    }
  });
}

}  // namespace axo
