// One rank's GPT under a 4D-parallel plan (see parallel_gpt.h).
#include "executor/parallel/parallel_gpt.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "executor/timer.h"
#include "model/error.h"
#include "model/memory_model.h"

namespace axo {

ParallelGpt::ParallelGpt(const GptShape& shape, const ProcessGrid& grid, const ParallelOptions& options)
    : grid_(grid),
      options_(options),
      split_(split_pipeline(gpt_spec(shape, options.seq > 0 ? options.seq : shape.max_seq), grid.config().pipeline,
                            grid.config().interleave)),
      device_(options.device_memory_bytes),
      parameters_({device_, DeviceUse::weights}),
      gradients_({device_, DeviceUse::gradients}),
      m_({grid.config().offload ? host_ : device_, DeviceUse::optimizer}),
      v_(m_.get_allocator()),
      // The masters: on the host with offload; on the device (optimizer state, as the moments) in bf16 or fp16.
      master_(grid.config().offload ? DeviceAllocator<float>(host_, DeviceUse::weights)
                                    : DeviceAllocator<float>(device_, DeviceUse::optimizer)),
      host_gradients_({host_, DeviceUse::gradients}),
      parameters16_({device_, DeviceUse::weights}),
      gradients16_({device_, DeviceUse::gradients}),
      bucket_gradients_({device_, DeviceUse::gradients}) {
  const ParallelConfig& c = grid.config();
  layout_ = std::make_unique<ShardLayout>(shape, c, grid.coords(), split_);
  const size_t n = size_t(layout_->size());
  if (options.precision == Precision::fp8) {
    throw InputError("precision fp8: the CPU executor trains in fp32, bf16 or fp16");
  }
  const std::string recompute = recompute_problem(options.recompute, options.recompute_layers);
  if (!recompute.empty()) throw InputError(recompute);
  const bool shards = sharded_optimizer(c);  // one data × context rank: nothing to shard, zero 0's path
  // Zero 2: no local gradient buffer, the buckets in backward (bucket_gradients.h) and the optimizer's shard.
  if (shards && c.zero >= 2) {
    bucketed_ = std::make_unique<BucketGradients>(*layout_, half(), half() ? format() : cpu::HalfFormat::bf16, device_);
  }
  half() ? parameters16_.assign(n, cpu::Half{}) : parameters_.assign(n, 0.0f);
  if (!bucketed_) half() ? gradients16_.assign(n, cpu::Half{}) : gradients_.assign(n, 0.0f);
  const ShardView weights = half() ? ShardView(parameters16_.data(), format()) : ShardView(parameters_.data());
  const ShardGrad gradients = bucketed_ ? ShardGrad()
                              : half()  ? ShardGrad(gradients16_.data(), format())
                                        : ShardGrad(gradients_.data());
  stage_ = std::make_unique<GptStage>(*layout_, grid, weights, gradients, options.overlap,
                                      StageRecompute{options.recompute, options.recompute_layers}, times_, device_,
                                      options.precision, bucketed_.get());
  if (shards) {
    GridCoords owner = grid.coords();
    owner.data = 0, owner.context = 0;  // the ownership data × context rank 0 sees: each shard element counted once
    owner_layout_ = std::make_unique<ShardLayout>(shape, c, owner, split_);
    const ShardGrad stored_weights =
        half() ? ShardGrad(parameters16_.data(), format()) : ShardGrad(parameters_.data());
    zero_ = std::make_unique<ZeroOptimizer>(*layout_, *owner_layout_, grid, stored_weights, gradients, device_, host_,
                                            times_, options.optimizer_threads);
    if (bucketed_) stage_->on_microbatch_gradients([this](int64_t layer) { hand_over_microbatch(layer); });
    return;
  }
  m_.assign(n, 0.0f);
  v_.assign(n, 0.0f);
  if (offload() || half()) master_.assign(n, 0.0f);
  if (offload()) host_gradients_.assign(n, 0.0f);
}

void ParallelGpt::load(const std::vector<float>& full) {
  if (int64_t(full.size()) != gpt_parameter_count(layout_->shape())) {
    throw std::invalid_argument("ParallelGpt::load: not a full parameter vector of this model");
  }
  if (zero_) return load_sharded(full);
  if (!half()) layout_->scatter(full.data(), parameters_.data());
  if (offload() || half()) layout_->scatter(full.data(), master_.data());
  if (half()) cpu::to_half(master_.data(), parameters16_.data(), int64_t(master_.size()), format());
}

void ParallelGpt::load_moments(const std::vector<float>& full_m, const std::vector<float>& full_v) {
  const size_t count = size_t(gpt_parameter_count(layout_->shape()));
  if (full_m.size() != count || full_v.size() != count) {
    throw std::invalid_argument("ParallelGpt::load_moments: not full vectors of this model");
  }
  if (zero_) {
    std::vector<float> local_m(size_t(layout_->size()), 0.0f), local_v(local_m.size(), 0.0f);
    layout_->scatter(full_m.data(), local_m.data());
    layout_->scatter(full_v.data(), local_v.data());
    return zero_->load_moments(local_m.data(), local_v.data());
  }
  layout_->scatter(full_m.data(), m_.data());
  layout_->scatter(full_v.data(), v_.data());
}

std::vector<float> ParallelGpt::gathered_first_moment() const {
  return zero_ ? gather(zero_->local_first_moment().data()) : gather(m_.data());
}

std::vector<float> ParallelGpt::gathered_second_moment() const {
  return zero_ ? gather(zero_->local_second_moment().data()) : gather(v_.data());
}

std::vector<float> ParallelGpt::gathered_gradients() const {
  if (zero_) return gather(zero_->local_gradients().data());
  if (offload()) return gather(host_gradients_.data());
  return gather_gradients();
}

std::vector<float> ParallelGpt::gather(const float* local) const {
  std::vector<float> full(size_t(gpt_parameter_count(layout_->shape())), 0.0f);
  layout_->add_owned(local, full.data());
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

void ParallelGpt::copy_gradients_down(int64_t offset, int64_t size) {
  timed(times_.offload, [&] {
    if (half()) return cpu::to_float(gradients16_.data() + offset, host_gradients_.data() + offset, size, format());
    std::copy_n(gradients_.data() + offset, size, host_gradients_.data() + offset);
  });
}

void ParallelGpt::copy_weights_up(int64_t offset, int64_t size) {
  timed(times_.offload, [&] {
    if (half()) return cpu::to_half(master_.data() + offset, parameters16_.data() + offset, size, format());
    std::copy_n(master_.data() + offset, size, parameters_.data() + offset);
  });
}

double ParallelGpt::forward_backward(const int* inputs, const int* targets, int64_t sequences, int64_t T,
                                     int64_t microbatch, double loss_scale) {
  const ParallelConfig& c = grid_.config();
  if (microbatch < 1 || sequences % microbatch != 0 || microbatch % c.z != 0) {
    throw InputError("microbatch " + std::to_string(microbatch) + ": it must divide the replica's " +
                     std::to_string(sequences) + " sequences and be divisible by z = " + std::to_string(c.z) +
                     " (Z splits a microbatch's sequences)");
  }
  const double tokens = double(sequences * T * c.data);
  std::fill(gradients_.begin(), gradients_.end(), 0.0f);
  std::fill(gradients16_.begin(), gradients16_.end(), cpu::Half{});
  half_gradient_factor_ = 1;
  if (zero_) zero_->start_step();
  stage_->set_batch(inputs, targets, sequences, T, microbatch, loss_scale / tokens);
  // Data-parallel buckets start reducing as soon as their gradients are final (overlapping the rest of backward).
  const std::vector<GradientBucket>& buckets = layout_->buckets();
  std::vector<std::pair<size_t, RequestPtr>> reductions;  // bucket index, its all-reduce (null: none needed)
  // 2-byte storage: the buckets' fp32 copies.
  std::vector<DeviceFloats> wide(buckets.size(), DeviceFloats({device_, DeviceUse::comm_buffers}));
  stage_->on_gradients_final([&](int64_t layer) {
    for (size_t k = 0; k < buckets.size(); ++k) {
      const GradientBucket& b = buckets[k];
      if (b.layer != layer) continue;
      if (zero_) {
        if (!bucketed_) zero_->start_bucket(k);  // zero 2 has handed every microbatch over already
        continue;
      }
      Communicator& group = b.group == GradientGroup::data         ? grid_.data_and_context()
                            : b.group == GradientGroup::z_and_data ? grid_.z_and_data()
                                                                   : grid_.y_z_and_data();
      RequestPtr request;
      if (group.size() > 1) {
        timed(times_.dp_comm, [&] {
          request = group.start_all_reduce(reduction_buffer(b.offset, b.size, wide[k]), size_t(b.size));
        });
      }
      reductions.emplace_back(k, std::move(request));
    }
  });
  run_pipeline(*stage_, grid_, sequences / microbatch, options_.schedule, times_, device_);
  if (zero_) {
    zero_->finish_reduction();
    double loss = 0;
    timed(times_.optimizer, [&] { loss = global_loss(tokens); });
    return loss;
  }
  // The tied embedding's gradient is complete only after the reduction below; its buckets go down last.
  Communicator* embedding = grid_.embedding();
  auto holds_tied = [&](const GradientBucket& b) {
    if (embedding == nullptr) return false;
    for (const LocalTensor& t : layout_->tensors()) {
      if (t.tied && t.offset >= b.offset && t.offset < b.offset + b.size) return true;
    }
    return false;
  };
  std::vector<bool> down(buckets.size(), false);
  for (auto& [k, request] : reductions) {
    if (Request* pending = request.get()) timed(times_.dp_comm, [pending] { pending->wait(); });
    store_reduced(buckets[k].offset, buckets[k].size, wide[k]);
    if (offload() && !holds_tied(buckets[k])) copy_gradients_down(buckets[k].offset, buckets[k].size), down[k] = true;
  }
  if (embedding) {
    // The tied embedding: the first stage's gradient (lookup) plus the last's (head).
    timed(times_.dp_comm, [&] {
      for (const LocalTensor& t : layout_->tensors()) {
        if (!t.tied) continue;
        DeviceFloats tied({device_, DeviceUse::comm_buffers});
        embedding->all_reduce(reduction_buffer(t.offset, t.size, tied), size_t(t.size));
        store_reduced(t.offset, t.size, tied);
      }
    });
  }
  if (offload()) {
    for (size_t k = 0; k < buckets.size(); ++k) {
      if (!down[k]) copy_gradients_down(buckets[k].offset, buckets[k].size);
    }
  }
  double loss = 0;
  timed(times_.optimizer, [&] { loss = global_loss(tokens); });
  return loss;
}

void ParallelGpt::hand_over_microbatch(int64_t layer) {
  const std::vector<GradientBucket>& buckets = layout_->buckets();
  for (size_t k = 0; k < buckets.size(); ++k) {
    if (buckets[k].layer != layer) continue;
    // A bucket this microbatch left untouched still takes part: every replica reduces the same sequence.
    if (!bucketed_->held(k)) bucketed_->at(buckets[k].offset);
    zero_->reduce_microbatch(k, bucketed_->bucket(k));
    bucketed_->release(k);
  }
}

double ParallelGpt::evaluate(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch) {
  const ParallelConfig& c = grid_.config();
  const double tokens = double(sequences * T * c.data);
  stage_->set_batch(inputs, targets, sequences, T, microbatch, 1.0 / tokens);
  PhaseTimes ignored;
  run_forward_only(*stage_, grid_, sequences / microbatch, ignored, device_);
  return global_loss(tokens);
}

double ParallelGpt::clip_gradients(double max_norm) {
  if (zero_) return zero_->clip_gradients(max_norm);
  double norm = 0;
  timed(times_.optimizer, [&] {
    double local = 0;
    for (const LocalTensor& t : layout_->tensors()) {
      if (t.owned) add_sum_squares(t, local);
    }
    float sum = float(local);
    grid_.world().all_reduce(&sum, 1);
    norm = std::sqrt(double(sum));
    if (max_norm > 0 && norm > max_norm) scale_gradients(float(max_norm / norm));
  });
  return norm;
}

void ParallelGpt::adamw_range(int64_t begin, int64_t end, const float* gradients, long step, double lr,
                              double weight_decay) {
  std::vector<cpu::AdamWRange> ranges;  // offsets from begin
  for (const LocalTensor& t : layout_->tensors()) {
    if (t.offset >= begin && t.offset < end) ranges.push_back({t.offset - begin, t.size, t.decayed ? float(weight_decay) : 0.0f});
  }
  cpu::AdamWSettings settings;
  settings.learning_rate = float(lr);
  float* weights = updated_weights().data() + begin;
  timed(times_.optimizer, [&] {
    cpu::adamw_update_ranges(weights, gradients, m_.data() + begin, v_.data() + begin, ranges, settings, step,
                             options_.optimizer_threads);
  });
}

void ParallelGpt::adamw(long step, double lr, double weight_decay) {
  if (zero_) return zero_->adamw(step, lr, weight_decay);
  if (half() && !offload()) return adamw_half(step, lr, weight_decay);
  if (!offload()) return adamw_range(0, layout_->size(), gradients_.data(), step, lr, weight_decay);
  // Bucket by bucket on the host, each bucket's weights going back up as it is done.
  for (const GradientBucket& b : layout_->buckets()) {
    adamw_range(b.offset, b.offset + b.size, host_gradients_.data() + b.offset, step, lr, weight_decay);
    copy_weights_up(b.offset, b.size);
  }
}

}  // namespace axo
