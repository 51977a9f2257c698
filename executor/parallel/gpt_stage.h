// One rank's part of one pipeline stage of the GPT under the 4D grid: its
// chunks' layers' forward and backward per microbatch on the rank's shards
// (see shard_layout.h for which), activations kept per chunk and microbatch
// in flight. The model's first chunk starts with the embedding, its last
// ends with the final norm, the LM head and the loss.
//
// Local shapes, with a microbatch of b sequences of T tokens split over Z
// (Bz = b/Gz sequences, m = Bz·T rows), Cx = C/Gx, Cy = C/Gy, NHy = NH/Gy:
//   residual stream, LayerNorms, attproj and fcproj outputs   [m, Cx]  (replicated over Y)
//   qkv [m, 3Cy] (this Y rank's heads' q, k, v), attention out [m, Cy],
//   fc and GELU [m, 4Cy]                                       (replicated over X)
//   logits, probabilities [m, V'/Gy]                           (replicated over X)
// The embedding, the LM head and the loss are vocabulary-parallel over Y
// (vocab_parallel_head.h): the logits of this Y rank's slice of the
// vocabulary, from its X slice of the channels, all-reduced over X.
//
// Recompute: none stashes every activation above per microbatch in flight;
// selective stashes all but the attention probabilities [Bz, NHy, T, T] and
// recomputes them (QKᵀ and softmax) from the stashed qkv in backward
// (Korthikanti et al. 2022, as the memory model prices it); full stashes
// each layer's input alone (Megatron-LM's checkpoint per layer) and, layer
// by layer in backward, reruns that layer's forward from it into one
// layer's fp32 slot just before its backward; full on the first N layers
// of each chunk (recompute_layers) does that for those N and stashes the
// other layers' activations whole. The head's (the model's last chunk) are
// kept either way, computed in the stash itself in fp32. The transient fp32
// memory is one layer's, as the memory model counts it (and in bf16 the
// head's).
//
// Precision: in bf16 or fp16 the layers' GEMMs take 2-byte operands with
// fp32 accumulation (cpu/gemm_precision.h), and the activations kept for
// backward are stored in that format (activation_stash.h): a chunk computes in fp32 views
// of its input, one layer slot and its head (as full recompute does in any
// precision), and keeps each layer rounded in the stash as soon as it is
// computed (only its output, for a layer full recompute reruns); backward
// widens a layer back into the slot just before it needs it (the end of
// gpt_stage.cc).
//
// With Megatron's sequence parallelism (x = 1) the residual stream, the
// norms, the embedding and the head hold this Y rank's m/Gy rows [mr, C]
// (with z > 1, of this Z rank's m = Bz·T rows: the Y group shares z);
// the plain layers all-gather their input's rows (kept for backward as
// ln1_rows, ln2_rows) and the transposed layers reduce-scatter their output
// rows (linear_4d.h).
//
// With context parallelism (c > 1) each sequence's T above is the rank's
// T/c tokens, two of its 2·c chunks (context_chunks.h): the embedding takes
// their global positions, attention is ring attention over the context
// group (ring_attention.h), which keeps each row's log-sum-exp
// [Bz, NHy, T/c] in the probabilities' place, and the loss covers the
// rank's tokens (ParallelGpt sums it over the context group with the rest).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "executor/parallel/activation_stash.h"
#include "executor/parallel/context_chunks.h"
#include "executor/parallel/linear_4d.h"
#include "executor/parallel/pipeline_schedule.h"
#include "executor/parallel/ring_attention.h"
#include "executor/parallel/shard_layout.h"
#include "executor/parallel/sharded_layernorm.h"
#include "executor/parallel/stage_parameters.h"
#include "executor/parallel/vocab_parallel_head.h"
#include "model/parallel_config.h"

namespace axo {

// What backward recomputes: Recompute's kind, and under full recompute the
// first `layers` layers of each chunk only (0: all of them).
struct StageRecompute {
  Recompute kind = Recompute::none;
  int64_t layers = 0;
};

class GptStage : public PipelineStage {
 public:
  // parameters and gradients are the rank's local buffers (layout.size()
  // elements, fp32, or bf16 or fp16 in mixed precision: stage_parameters.h); they
  // must outlive the stage, as must `memory`, where the
  // stage books its activations and its layers' communication buffers.
  // With `buckets` (ZeRO stage 2) the gradients go into its buckets instead (stage_parameters.h).
  GptStage(const ShardLayout& layout, const ProcessGrid& grid, ShardView parameters, ShardGrad gradients,
           const Overlap& overlap, StageRecompute recompute, PhaseTimes& times, DeviceMemory& memory,
           Precision precision = Precision::fp32, BucketGradients* buckets = nullptr);

  // The replica's batch for the coming step or evaluation: inputs and targets
  // [sequences·T], split into microbatches of `microbatch` sequences.
  // loss_scale multiplies each token's loss gradient (1 / tokens of the global batch).
  void set_batch(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch,
                 double loss_scale);
  // Σ over this rank's rows of the per-token loss since set_batch (last stage).
  double loss_sum() const { return loss_sum_; }
  // Called during each chunk's backward of the last microbatch, once the
  // gradients of `layer` are final on this rank (-1: the embedding; the
  // model's layer count: the head).
  void on_gradients_final(std::function<void(int64_t layer)> callback) { on_final_ = std::move(callback); }
  // Called during every microbatch's backward once its gradients of `layer`
  // are complete on this rank (Linear4d's reduce-scatter over Z included),
  // before on_gradients_final's call for the last microbatch: ZeRO stage 2
  // hands each microbatch's buckets over here.
  void on_microbatch_gradients(std::function<void(int64_t layer)> callback) { on_microbatch_ = std::move(callback); }

  int64_t boundary_size() const override { return stream_rows_ * Cx_; }
  void forward(int64_t chunk, int64_t microbatch, const float* input, float* output) override;
  void backward(int64_t chunk, int64_t microbatch, const float* doutput, float* dinput) override;
  void drop(int64_t chunk, int64_t microbatch) override;

 private:
  struct LayerActs;
  struct Acts;
  struct LayerLinears {
    std::unique_ptr<Linear4d> qkv, attproj, fc, fcproj;
  };
  struct Gradients;
  // The model's first chunk (with the embedding) and its last (with the head).
  bool model_first(int64_t chunk) const { return grid_.first_stage() && chunk == 0; }
  bool model_last(int64_t chunk) const { return grid_.last_stage() && chunk == int64_t(layout_.chunks().size()) - 1; }
  // Views of one microbatch's activations of `chunk` at base; *size gets the elements used.
  Acts carve(float* base, int64_t chunk, int64_t* size = nullptr) const;
  int64_t acts_size(int64_t chunk) const;
  // Views of the activation gradients a backward of `chunk` needs at base:
  // one layer's, reused layer after layer, and two residual-stream buffers in turn.
  Gradients carve_gradients(float* base, int64_t chunk, int64_t* size = nullptr) const;
  // The most elements any chunk's carve_gradients takes.
  int64_t largest_gradients_carve() const;
  // One layer's views, taken in order by `take` (both carves); the attention
  // probabilities only with `scores` (else selective recompute's buffer, or none).
  void carve_layer(LayerActs& l, const std::function<void(float*&, int64_t)>& take, bool scores) const;
  // Whether a layer's stash holds its att: the probabilities (unless selective recompute rebuilds
  // them), or with the ring each row's log-sum-exp.
  bool keeps_probabilities() const { return ring_ != nullptr || recompute_ != Recompute::selective; }
  // The forward of the chunk's layers [begin, end), the first from a.input, each from the one below.
  void forward_layers(Acts& a, int64_t chunk, size_t begin, size_t end,
                      const std::function<void(size_t)>& layer_done = {});
  // The model's last chunk: the final norm and the logits from a.output().
  void forward_head(Acts& a);
  // Of `chunk`'s layers, those backward reruns from the stash: full recompute's first
  // recompute_layers_ (0: all); none otherwise.
  size_t recomputed_layers(int64_t chunk) const;
  // Layer l's backward with linears w; `below` (the chunk's layer under it, or null) gets the
  // prefetch of what it runs first: its recompute's qkv forward when `below_recomputed`.
  void backward_layer(int64_t l, LayerLinears& w, LayerLinears* below, bool below_recomputed, const LayerActs& a,
                      LayerActs& d,
                      const float* in, float* din);
  // The head's backward from the loss to d.output() (the model's last chunk).
  void backward_head(int64_t microbatch, const Acts& a, Acts& d, bool final);
  // `layer`'s gradients are done for this microbatch (`final`: the last one): the callbacks.
  void gradients_done(int64_t layer, bool final);
  // The microbatch's m tokens on this Z rank (all of them, whatever rows the stream holds).
  const int* all_tokens(const std::vector<int>& all, int64_t microbatch) const;
  // bf16 or fp16, and full recompute: the rolling fp32 views above (the end of gpt_stage.cc).
  bool rolls() const { return precision_ != Precision::fp32 || recompute_ == Recompute::full; }
  ActivationStash reused_stash(size_t size, Precision precision);
  // The rolling views of `chunk`; the head's in `stash`'s head region when head_in_stash.
  Acts carve_rolling(int64_t chunk, ActivationStash& stash);
  // fp32 keeps the head as computed: full recompute computes it in the stash itself, not in a
  // rolling view to copy from (bf16 rounds it into the stash).
  bool head_in_stash() const { return precision_ == Precision::fp32; }
  int64_t rolling_size() const;
  // A region of a chunk's stash (the input, layer i of the chunk, its output residual3 alone, the head)
  // kept from its rolling view (rounded in bf16), or restored (widened).
  enum class Region { input, layer, output, head };
  void keep_region(ActivationStash& stash, const Acts& a, int64_t chunk, Region region, size_t i = 0) const;
  void restore_region(const ActivationStash& stash, const Acts& a, int64_t chunk, Region region,
                      size_t i = 0) const;
  int64_t region_size(Region region) const;
  // The elements a chunk's rolling stash keeps.
  int64_t kept_size(int64_t chunk) const;
  // Where a region lies in the chunk's stash (offset, size) and its rolling view.
  void region_place(const Acts& a, int64_t chunk, Region region, size_t i, size_t& offset, size_t& size,
                    float*& view) const;
  // Layer i into the slot for its backward: recomputed from the layer below's kept output, or
  // restored; then the layer below's output, its input, over the slot's residual3.
  void restore_layer(const ActivationStash& stash, Acts& a, int64_t chunk, size_t i);
  // The head's views (the model's last chunk), taken in order by `take`.
  void carve_head(Acts& a, const std::function<void(float*&, int64_t)>& take) const;
  const ShardLayout& layout_;
  const ProcessGrid& grid_;
  StageParameters params_;
  Recompute recompute_;
  int64_t recompute_layers_;  // StageRecompute::layers
  Precision precision_;
  PhaseTimes& times_;
  void gather_rows(float* all_rows, const float* mine);
  bool sequence_parallel_;
  int64_t C_, Cx_, Cy_, NHy_, T_ = 0, Bz_ = 0, microbatch_ = 0, microbatches_ = 0;  // T_: this rank's tokens of a sequence
  int64_t rows_ = 0;         // m: the microbatch's rows on this Z rank
  int64_t stream_rows_ = 0;  // mr: the residual stream's rows here (m/Gy with sequence parallelism)
  int64_t first_row_ = 0;    // of the stream's rows within the m
  double loss_scale_ = 1, loss_sum_ = 0;
  std::vector<int> inputs_, targets_;  // this rank's tokens of the batch, [sequences, T_]
  ContextChunks chunks_;
  std::unique_ptr<ContextRingAttention> ring_;  // with context > 1
  Linear4dScratch linear_scratch_;
  std::vector<LayerLinears> linears_;       // the chunks' layers, in order
  std::vector<size_t> first_linear_;        // index in linears_ of each chunk's first layer
  ShardedLayerNorm norm_;
  std::map<std::pair<int64_t, int64_t>, ActivationStash> stash_;  // per (chunk, microbatch) in flight
  std::vector<ActivationStash> free_;       // stashes to reuse
  DeviceAllocator<float> activations_;  // books the activations below and the stashes
  DeviceFloats grads_, attention_scratch_;
  // Selective recompute's attention probabilities [Bz, NHy, T, T], one layer's (never stashed);
  // the const carves hand out views of it.
  mutable DeviceFloats scores_;
  DeviceFloats rolling_;  // bf16 or fp16, or full recompute: the rolling fp32 views
  VocabParallelHead head_;
  std::function<void(int64_t)> on_final_, on_microbatch_;
};

}  // namespace axo
