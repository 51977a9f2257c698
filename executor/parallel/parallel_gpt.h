// The GPT trained by one rank of a 4D-parallel plan: its shards of the
// parameters (shard_layout.h), its pipeline stage (gpt_stage.h), the
// schedule that runs the stage's microbatches (pipeline_schedule.h), the
// gradient reductions that follow, and AdamW on the shards.
//
// Every byte the rank holds on its device goes through one DeviceMemory
// (device_memory.h) with the plan's capacity: weights, gradients, the Adam
// moments, activations and communication buffers.
//
// With offload (the plan's `offload`), AxoNN's CPU offload: the device keeps
// the weights and gradients; the fp32 master weights, the moments and a
// gradient copy live in host memory (booked in a second, unlimited
// DeviceMemory: pinned memory on a GPU). Each data-parallel bucket's
// gradients go down as soon as its all-reduce completes, while the later
// buckets' are still in flight; clipping and AdamW run on the host over
// threads, bucket by bucket, each bucket's weights going back up as it is
// done. In fp32 the updated weights are those of the run without offload,
// bit for bit: the same operations in the same order.
//
// With precision bf16 or fp16 (mixed precision, AxoNN's and Megatron's
// recipe): the device keeps the weights and gradients in that 2-byte format
// (cpu/half.h); the fp32
// master weights and the moments live with the optimizer (on the device, or
// on the host with offload: 4 bytes of model state per parameter on the
// device against fp32's 16 without offload). Gradient reductions run in fp32
// (each bucket widened, reduced, rounded back); AdamW updates the fp32
// masters, and the weights are their rounding to the 2-byte format
// (parallel_gpt_precision.cc). fp16's range (largest finite 65504) needs
// dynamic loss scaling (train/loss_scaler.h): a gradient that overflows is
// an inf in the fp16 storage, found by unscale_gradients().
//
// With the plan's `zero` at 1 or 2 and data > 1, the gradients are
// reduce-scattered and the optimizer state sharded over the data ranks
// (zero_optimizer.h), in fp32 or bf16 (there the fp32 masters sharded with
// the moments); zero 2 reduce-scatters every microbatch's gradients into a
// gradient shard and keeps no whole gradient buffer (bucket_gradients.h);
// with one data rank, zero changes nothing.
//
// Every operation is collective over the world; the results (loss, norm,
// gathered tensors) are the same on every rank.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "executor/cpu/adamw.h"
#include "executor/memory/device_memory.h"
#include "executor/parallel/bucket_gradients.h"
#include "executor/parallel/gpt_stage.h"
#include "executor/parallel/phase_times.h"
#include "executor/parallel/pipeline_schedule.h"
#include "executor/parallel/process_grid.h"
#include "executor/parallel/shard_layout.h"
#include "executor/parallel/zero_optimizer.h"

namespace axo {

struct ParallelOptions {
  ScheduleOptions schedule;
  Overlap overlap;  // OAR, ORS and OAG in the tensor-parallel layers
  Recompute recompute = Recompute::none;
  int64_t recompute_layers = 0;     // full recompute of each chunk's first layers only (0: all; gpt_stage.h)
  int64_t seq = 0;                  // tokens per sequence, for balancing the stages; 0: the model's
  int64_t device_memory_bytes = 0;  // the device's capacity; 0: no limit
  int optimizer_threads = 1;        // threads for AdamW (on the host with offload)
  // fp32, or bf16 or fp16: weights, gradients and kept activations in that format, GEMMs on 2-byte operands
  // with fp32 accumulation; fp32 masters, moments and reductions (see above).
  Precision precision = Precision::fp32;
};

class ParallelGpt {
 public:
  // InputError when the plan cannot run this model (what does not divide
  // what); DeviceMemoryExhausted when its model state does not fit.
  ParallelGpt(const GptShape& shape, const ProcessGrid& grid, const ParallelOptions& options);

  const ShardLayout& layout() const { return *layout_; }
  // The model's layers by stage and chunk (stage_partition.h), the same on every rank.
  const PipelineSplit& split() const { return split_; }
  const ProcessGrid& grid() const { return grid_; }
  bool offload() const { return grid_.config().offload; }
  // This rank's shards on the device (layout().size() elements).
  // fp32 only (empty in bf16 and fp16: see half_parameters()).
  const DeviceFloats& parameters() const { return parameters_; }
  const DeviceFloats& gradients() const { return gradients_; }
  // Mixed precision: weights and gradients on the device in 2 bytes, in format().
  bool half() const { return options_.precision == Precision::bf16 || options_.precision == Precision::fp16; }
  cpu::HalfFormat format() const { return cpu::half_format(options_.precision); }
  const DeviceHalves& half_parameters() const { return parameters16_; }
  const DeviceHalves& half_gradients() const { return gradients16_; }
  // The fp32 weights AdamW updates: the parameters in fp32 (with zero, or without offload), else the master weights.
  // Not with zero in 2 bytes (the masters are sharded): gathered_master_weights() serves every case.
  const DeviceFloats& master_weights() const { return !zero_ && (offload() || half()) ? master_ : parameters_; }
  // The fp32 weights AdamW updates, a full vector (llm.c layout) on every rank (collective).
  std::vector<float> gathered_master_weights() const;
  // The full gradient vector (llm.c layout) on every rank, widened from 2 bytes in bf16 and fp16 (collective).
  std::vector<float> gather_gradients() const;
  // Adam's first and second moments, full vectors (llm.c layout) on every rank.
  std::vector<float> gathered_first_moment() const;
  std::vector<float> gathered_second_moment() const;
  // The gradient the optimizer steps with, a full vector on every rank.
  std::vector<float> gathered_gradients() const;
  PhaseTimes& times() { return times_; }
  const DeviceMemory& device_memory() const { return device_; }
  const DeviceMemory& host_memory() const { return host_; }

  // Takes this rank's shards of full parameter (and moment) vectors (llm.c layout).
  void load(const std::vector<float>& full);
  void load_moments(const std::vector<float>& full_m, const std::vector<float>& full_v);
  // The full vector (llm.c layout) of a local one (layout().size() elements:
  // parameters, gradients or moments), on every rank.
  std::vector<float> gather(const float* local) const;

  // Forward and backward of this data replica's batch, inputs and targets
  // [sequences·T] in microbatches of `microbatch` sequences; afterwards every
  // rank holds the gradient of the global batch's mean loss for its shards
  // (and, with offload, its copy in host memory), times loss_scale (dynamic
  // loss scaling: train/loss_scaler.h). Returns that loss, unscaled.
  double forward_backward(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch,
                          double loss_scale = 1);
  // Loss scaling (collective): whether any rank's gradients hold an inf or a
  // NaN (the flag reduced over the world, so every rank answers alike); if
  // none does, divides the gradients by loss_scale.
  bool unscale_gradients(double loss_scale);
  // Testing only: makes one of this rank's gradients +inf, as an fp16 overflow would.
  void inject_gradient_overflow();
  // Mean loss of the global batch, forward only.
  double evaluate(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch);
  // The global gradient norm; scales the gradients to max_norm when above it (0: never).
  double clip_gradients(double max_norm);
  // AdamW step `step` (1-based) on the shards, decaying matrices only.
  void adamw(long step, double lr, double weight_decay);

 private:
  double global_loss(double tokens);
  DeviceFloats& updated_weights() { return offload() || half() ? master_ : parameters_; }
  // Offload's host-link copies of a range [offset, offset + size).
  void copy_gradients_down(int64_t offset, int64_t size);
  // Zero 2: one microbatch's gradients of `layer` are complete; its buckets go to the optimizer's
  // reduce-scatter and are freed.
  void hand_over_microbatch(int64_t layer);
  void copy_weights_up(int64_t offset, int64_t size);
  // AdamW over the tensors within [begin, end) of the local arrays; `gradients` holds element begin's gradient.
  void adamw_range(int64_t begin, int64_t end, const float* gradients, long step, double lr, double weight_decay);
  // 2-byte storage (parallel_gpt_precision.cc): a bucket's gradients in fp32 to reduce (the gradients themselves in
  // fp32; else widened into a buffer kept in `wide`), and stored back once reduced.
  float* reduction_buffer(int64_t offset, int64_t size, DeviceFloats& wide);
  void store_reduced(int64_t offset, int64_t size, DeviceFloats& wide);  // and frees `wide`
  // Adds the squares of t's gradients (those the optimizer reads) to `sum`, in order.
  void add_sum_squares(const LocalTensor& t, double& sum) const;
  // Multiplies the gradients the optimizer reads by `scale` (2-byte ones without offload: into half_gradient_factor_).
  void scale_gradients(float scale);
  // With zero: the weights (rounded to 2 bytes in bf16 and fp16) and the optimizer's masters from a full fp32 vector.
  void load_sharded(const std::vector<float>& full);
  // AdamW without offload in bf16 or fp16: bucket by bucket, the gradients widened, the weights rounded from
  // the masters.
  void adamw_half(long step, double lr, double weight_decay);

  const ProcessGrid& grid_;
  ParallelOptions options_;
  PipelineSplit split_;
  std::unique_ptr<ShardLayout> layout_;
  DeviceMemory device_, host_;
  DeviceFloats parameters_, gradients_;
  DeviceFloats m_, v_;                       // on the device, or the host with offload
  DeviceFloats master_, host_gradients_;     // offload or 2-byte: fp32 master weights; offload: gradients brought down
  DeviceHalves parameters16_, gradients16_;  // bf16 or fp16 only: the weights and gradients on the device
  DeviceFloats bucket_gradients_;            // 2-byte without offload: one bucket's gradients widened for AdamW
  // 2-byte without offload: the factor the stored gradients still owe (1 / the loss scale once unscaled, times
  // clipping's), applied where they are widened (the norm, AdamW, gather_gradients) rather than rounded in.
  float half_gradient_factor_ = 1;
  PhaseTimes times_;
  std::unique_ptr<GptStage> stage_;
  // zero >= 1: the optimizer sharded over the data ranks (it owns the moments and master weights).
  std::unique_ptr<ShardLayout> owner_layout_;
  std::unique_ptr<ZeroOptimizer> zero_;
  // zero 2: the gradient buckets in backward, in place of the local gradient buffer (stage_ writes into them).
  std::unique_ptr<BucketGradients> bucketed_;
};

}  // namespace axo
