// One rank's part of a GPT pipeline stage under the 4D grid (see gpt_stage.h).
#include "executor/parallel/gpt_stage.h"

#include <algorithm>

#include "executor/cpu/gemm_precision.h"
#include "executor/cpu/ops.h"
#include "executor/timer.h"
#include "model/error.h"

namespace axo {

// One layer's activations for one microbatch (local shapes in gpt_stage.h).
// mr = m without sequence parallelism.
struct GptStage::LayerActs {
  float *ln1, *ln1_mean, *ln1_rstd;  // [mr, Cx], [mr], [mr]
  float* ln1_rows;                   // [m, Cx]: ln1 gathered over Y (sequence parallelism; else ln1)
  float *qkv, *atty, *att;           // [m, 3Cy], [m, Cy], [Bz, NHy, T, T] (ring attention: its lse [Bz, NHy, T])
  float *attproj, *residual2;        // [mr, Cx]
  float *ln2, *ln2_mean, *ln2_rstd;  // [mr, Cx], [mr], [mr]
  float* ln2_rows;                   // [m, Cx]: like ln1_rows
  float *fch, *fch_gelu;             // [m, 4Cy]
  float *fcproj, *residual3;         // [mr, Cx]
};

struct GptStage::Acts {
  float* input;  // [mr, Cx]: the chunk's input (the embedding in the model's first chunk), the stash's first region
  std::vector<LayerActs> layers;
  float *lnf, *lnf_mean, *lnf_rstd;  // the model's last chunk: [mr, Cx], [mr], [mr]
  float* lnf_rows;                    // [m, Cx]: lnf gathered over Y (sequence parallelism; else lnf)
  float *logits, *probs;              // [m, R]: this Y rank's vocabulary slice (vocab_parallel_head.h)
  float* output() const { return layers.back().residual3; }
};

// The activation gradients of one microbatch's backward, llm.c's layout
// folded to one layer: every acts.layers[i] views the same layer buffer but
// for residual3 (the layer's output gradient), which takes the two stream
// buffers in turn, so a layer's input gradient never overwrites its output's.
struct GptStage::Gradients {
  Acts acts;                      // input, layers, lnf, logits (the rest unused)
  float* stream[2];               // [mr, Cx] each
  float* layer;                   // one layer's gradients, layer_size elements
  int64_t layer_size = 0;
};

GptStage::GptStage(const ShardLayout& layout, const ProcessGrid& grid, ShardView parameters, ShardGrad gradients,
                   const Overlap& overlap, StageRecompute recompute, PhaseTimes& times, DeviceMemory& memory,
                   Precision precision, BucketGradients* buckets)
    : layout_(layout),
      grid_(grid),
      params_(layout, parameters, gradients, memory, buckets),
      recompute_(recompute.kind),
      recompute_layers_(recompute.layers),
      precision_(precision),
      times_(times),
      sequence_parallel_(grid.config().sequence_parallel),
      linear_scratch_(memory),
      norm_(grid.x(), layout.shape().channels, times, memory),
      activations_(memory, DeviceUse::activations),
      grads_(activations_),
      attention_scratch_(activations_),
      scores_(activations_),
      rolling_(activations_),
      head_(layout.shape(), grid, times, memory, precision) {
  const GptShape& g = layout.shape();
  const ParallelConfig& c = grid.config();
  C_ = g.channels, Cx_ = C_ / c.x, Cy_ = C_ / c.y, NHy_ = g.heads / c.y;
  auto linear = [&](Communicator& in, Communicator& out, int64_t n_local, int64_t k_local) {
    return std::make_unique<Linear4d>(in, out, grid.z(), n_local, k_local, overlap, sequence_parallel_, times,
                                      linear_scratch_, precision);
  };
  for (const LayerRange& chunk : layout.chunks()) {
    first_linear_.push_back(linears_.size());
    for (int64_t l = chunk.begin; l < chunk.end; ++l) {
      LayerLinears ll;
      ll.qkv = linear(grid.x(), grid.y(), 3 * Cy_, Cx_);
      ll.attproj = linear(grid.y(), grid.x(), Cx_, Cy_);
      ll.fc = linear(grid.x(), grid.y(), 4 * Cy_, Cx_);
      ll.fcproj = linear(grid.y(), grid.x(), Cx_, 4 * Cy_);
      linears_.push_back(std::move(ll));
    }
  }
  if (c.context > 1) ring_ = std::make_unique<ContextRingAttention>(grid.context(), times, memory);
}

void GptStage::set_batch(const int* inputs, const int* targets, int64_t sequences, int64_t T, int64_t microbatch,
                         double loss_scale) {
  const int64_t Gz = grid_.config().z;
  chunks_ = ContextChunks(grid_.config().context, grid_.coords().context, T);
  inputs_ = chunks_.select(inputs, sequences);
  targets_ = chunks_.select(targets, sequences);
  T = chunks_.local_length();
  T_ = T, microbatch_ = microbatch, microbatches_ = sequences / microbatch;
  Bz_ = microbatch / Gz, rows_ = Bz_ * T;
  const int64_t Gy = grid_.config().y;
  if (sequence_parallel_ && rows_ % Gy != 0) {
    throw InputError("sequence parallelism: y = " + std::to_string(Gy) + " does not divide the microbatch's " +
                     std::to_string(rows_) + " tokens");
  }
  stream_rows_ = sequence_parallel_ ? rows_ / Gy : rows_;
  first_row_ = sequence_parallel_ ? grid_.coords().y * stream_rows_ : 0;
  loss_scale_ = loss_scale, loss_sum_ = 0;
  const int64_t gradients = largest_gradients_carve();
  if (int64_t(grads_.size()) != gradients) {
    stash_.clear(), free_.clear();
    // Full recompute and bf16 compute in rolling views; otherwise the stashes hold the activations.
    rolling_.assign(rolls() ? size_t(rolling_size()) : 0, 0.0f);
    grads_.assign(size_t(gradients), 0.0f);
    attention_scratch_.assign(ring_ ? 0 : size_t(Bz_ * NHy_ * T * T), 0.0f);
    // Selective recompute: one layer's attention probabilities at a time, rebuilt in backward.
    scores_.assign(recompute_ == Recompute::selective && !ring_ ? size_t(Bz_ * NHy_ * T * T) : 0, 0.0f);
  }
  if (ring_) ring_->set_shape(chunks_, Bz_, Cy_, NHy_);
}

const int* GptStage::all_tokens(const std::vector<int>& all, int64_t microbatch) const {
  return all.data() + (microbatch * microbatch_ + grid_.coords().z * Bz_) * T_;
}

void GptStage::gather_rows(float* all_rows, const float* mine) {
  timed(times_.tp.all_gather, [&] { grid_.y().all_gather(mine, all_rows, size_t(stream_rows_ * Cx_)); });
}

namespace {

// Hands out consecutive views of `base` (null: counts the elements only).
struct Carver {
  float* base;
  int64_t used = 0;
  void operator()(float*& view, int64_t n) {
    view = base ? base + used : nullptr;
    used += n;
  }
};

}  // namespace

GptStage::Acts GptStage::carve(float* base, int64_t chunk, int64_t* size) const {
  const int64_t mr = stream_rows_;
  Carver take{base};
  Acts a{};
  take(a.input, mr * Cx_);
  a.layers.resize(size_t(layout_.chunks()[size_t(chunk)].count()));
  for (LayerActs& l : a.layers) carve_layer(l, std::ref(take), keeps_probabilities());
  if (model_last(chunk)) carve_head(a, std::ref(take));
  if (size) *size = take.used;
  return a;
}

void GptStage::carve_head(Acts& a, const std::function<void(float*&, int64_t)>& take) const {
  const int64_t mr = stream_rows_;
  take(a.lnf, mr * Cx_), take(a.lnf_mean, mr), take(a.lnf_rstd, mr);
  sequence_parallel_ ? take(a.lnf_rows, rows_ * Cx_) : void(a.lnf_rows = a.lnf);
  take(a.logits, rows_ * head_.rows()), take(a.probs, rows_ * head_.rows());
}

void GptStage::carve_layer(LayerActs& l, const std::function<void(float*&, int64_t)>& take, bool scores) const {
  const int64_t m = rows_, mr = stream_rows_;
  take(l.ln1, mr * Cx_), take(l.ln1_mean, mr), take(l.ln1_rstd, mr);
  take(l.qkv, m * 3 * Cy_), take(l.atty, m * Cy_);
  if (scores) {
    take(l.att, ring_ ? Bz_ * NHy_ * T_ : Bz_ * NHy_ * T_ * T_);
  } else {
    l.att = recompute_ == Recompute::selective ? scores_.data() : nullptr;
  }
  take(l.attproj, mr * Cx_), take(l.residual2, mr * Cx_);
  take(l.ln2, mr * Cx_), take(l.ln2_mean, mr), take(l.ln2_rstd, mr);
  take(l.fch, m * 4 * Cy_), take(l.fch_gelu, m * 4 * Cy_);
  take(l.fcproj, mr * Cx_), take(l.residual3, mr * Cx_);
  if (sequence_parallel_) {
    take(l.ln1_rows, m * Cx_), take(l.ln2_rows, m * Cx_);
  } else {
    l.ln1_rows = l.ln1, l.ln2_rows = l.ln2;
  }
}

GptStage::Gradients GptStage::carve_gradients(float* base, int64_t chunk, int64_t* size) const {
  const int64_t mr = stream_rows_;
  Carver take{base};
  Gradients g;
  take(g.stream[0], mr * Cx_), take(g.stream[1], mr * Cx_);
  LayerActs layer{};
  const int64_t layer_start = take.used;
  carve_layer(layer, std::ref(take), false);  // backward keeps the probabilities' gradient in attention_scratch_
  g.layer = base ? base + layer_start : nullptr;
  g.layer_size = take.used - layer_start;
  // Layer i's output gradient is stream[i % 2], its input gradient stream[(i + 1) % 2] (below it, layer i − 1's output).
  g.acts.layers.assign(size_t(layout_.chunks()[size_t(chunk)].count()), layer);
  for (size_t i = 0; i < g.acts.layers.size(); ++i) g.acts.layers[i].residual3 = g.stream[i % 2];
  g.acts.input = g.stream[1];
  if (model_last(chunk)) {
    take(g.acts.lnf, mr * Cx_), take(g.acts.logits, rows_ * head_.rows());
    sequence_parallel_ ? take(g.acts.lnf_rows, rows_ * Cx_) : void(g.acts.lnf_rows = g.acts.lnf);
  }
  if (size) *size = take.used;
  return g;
}

int64_t GptStage::acts_size(int64_t chunk) const {
  int64_t size = 0;
  carve(nullptr, chunk, &size);
  return size;
}

int64_t GptStage::largest_gradients_carve() const {
  int64_t largest = 0;
  for (int64_t c = 0; c < int64_t(layout_.chunks().size()); ++c) {
    int64_t size = 0;
    carve_gradients(nullptr, c, &size);
    largest = std::max(largest, size);
  }
  return largest;
}

// A freed stash of exactly `size` values at `precision` where there is one (no reallocation), else
// any freed one, else a new one.
ActivationStash GptStage::reused_stash(size_t size, Precision precision) {
  ActivationStash stash(activations_);
  if (free_.empty()) return stash;
  auto chosen = std::find_if(free_.begin(), free_.end(),
                             [&](const ActivationStash& s) { return s.holds_exactly(size, precision); });
  if (chosen == free_.end()) chosen = free_.end() - 1;
  stash = std::move(*chosen);
  free_.erase(chosen);
  return stash;
}

void GptStage::forward(int64_t chunk, int64_t microbatch, const float* input, float* output) {
  const int64_t mr = stream_rows_;
  const size_t size = size_t(rolls() ? kept_size(chunk) : acts_size(chunk));
  ActivationStash stash = reused_stash(size, rolls() ? precision_ : Precision::fp32);
  Acts a;
  if (rolls()) {
    stash.keep(nullptr, size, precision_);  // sized now, filled region by region
    a = carve_rolling(chunk, stash);
  } else {
    a = carve(stash.hold(size), chunk);
  }
  if (model_first(chunk)) {
    head_.embed(a.input, all_tokens(inputs_, microbatch), params_.weight(GptTensor::wte), params_.weight(GptTensor::wpe),
                rows_, first_row_, chunks_);
  } else {
    std::copy_n(input, mr * Cx_, a.input);
  }
  if (rolls()) keep_region(stash, a, chunk, Region::input);
  const size_t recomputed = recomputed_layers(chunk);
  forward_layers(a, chunk, 0, a.layers.size(), [&](size_t i) {
    // A layer backward recomputes leaves its output alone, the next one's checkpoint.
    if (rolls()) keep_region(stash, a, chunk, i < recomputed ? Region::output : Region::layer, i);
  });
  if (model_last(chunk)) {
    forward_head(a);
    loss_sum_ += head_.cross_entropy(a.probs, a.logits, all_tokens(targets_, microbatch), rows_, first_row_, mr);
  } else {
    std::copy_n(a.output(), mr * Cx_, output);
  }
  if (rolls() && model_last(chunk) && !head_in_stash()) keep_region(stash, a, chunk, Region::head);
  stash_.insert_or_assign({chunk, microbatch}, std::move(stash));
}

void GptStage::forward_layers(Acts& a, int64_t chunk, size_t begin, size_t end,
                              const std::function<void(size_t)>& layer_done) {
  const int64_t m = rows_, mr = stream_rows_, first = layout_.chunks()[size_t(chunk)].begin;
  LayerLinears* linears = &linears_[first_linear_[size_t(chunk)]];
  for (size_t i = begin; i < end; ++i) {
    const int64_t l = first + int64_t(i);
    LayerActs& x = a.layers[i];
    LayerLinears& w = linears[i];
    const float* in = i == 0 ? a.input : a.layers[i - 1].residual3;
    auto P = [&](GptTensor t) { return params_.weight(t, l); };
    auto F = [&](GptTensor t) { return params_.fp32(t, l); };
    w.qkv->prefetch(P(GptTensor::qkvw));
    w.attproj->prefetch(P(GptTensor::attprojw));
    norm_.forward(x.ln1, x.ln1_mean, x.ln1_rstd, in, F(GptTensor::ln1w), F(GptTensor::ln1b), mr, Cx_);
    if (sequence_parallel_) gather_rows(x.ln1_rows, x.ln1);
    w.qkv->forward(x.qkv, x.ln1_rows, P(GptTensor::qkvw), P(GptTensor::qkvb), m);
    w.fc->prefetch(P(GptTensor::fcw));
    if (ring_) {
      ring_->forward(x.atty, x.att, x.qkv);
    } else {
      timed(times_.ops.attention, [&] { cpu::attention_forward(x.atty, x.att, x.qkv, Bz_, T_, Cy_, NHy_); });
    }
    w.attproj->forward(x.attproj, x.atty, P(GptTensor::attprojw), P(GptTensor::attprojb), m);
    timed(times_.ops.residual, [&] { cpu::residual_forward(x.residual2, in, x.attproj, mr * Cx_); });
    norm_.forward(x.ln2, x.ln2_mean, x.ln2_rstd, x.residual2, F(GptTensor::ln2w), F(GptTensor::ln2b), mr, Cx_);
    if (sequence_parallel_) gather_rows(x.ln2_rows, x.ln2);
    w.fcproj->prefetch(P(GptTensor::fcprojw));
    w.fc->forward(x.fch, x.ln2_rows, P(GptTensor::fcw), P(GptTensor::fcb), m);
    timed(times_.ops.gelu, [&] { cpu::gelu_forward(x.fch_gelu, x.fch, m * 4 * Cy_); });
    if (i + 1 < end) linears[i + 1].qkv->prefetch(params_.weight(GptTensor::qkvw, l + 1));
    w.fcproj->forward(x.fcproj, x.fch_gelu, P(GptTensor::fcprojw), P(GptTensor::fcprojb), m);
    timed(times_.ops.residual, [&] { cpu::residual_forward(x.residual3, x.residual2, x.fcproj, mr * Cx_); });
    if (layer_done) layer_done(i);
  }
}

void GptStage::forward_head(Acts& a) {
  norm_.forward(a.lnf, a.lnf_mean, a.lnf_rstd, a.output(), params_.fp32(GptTensor::lnfw),
                params_.fp32(GptTensor::lnfb), stream_rows_, Cx_);
  head_.logits(a.logits, a.lnf_rows, a.lnf, params_.weight(GptTensor::wte), rows_);
}

void GptStage::backward_head(int64_t microbatch, const Acts& a, Acts& d, bool final) {
  const int64_t m = stream_rows_;
  // Each token's loss gradient is scaled by 1 / (the global batch's tokens).
  head_.backward(d.lnf, d.lnf_rows, d.logits, params_.gradient(GptTensor::wte), a.probs,
                 all_tokens(targets_, microbatch), a.lnf_rows, params_.weight(GptTensor::wte), rows_, loss_scale_);
  norm_.backward(d.output(), params_.fp32_gradient(GptTensor::lnfw), params_.fp32_gradient(GptTensor::lnfb), d.lnf,
                 a.output(), params_.fp32(GptTensor::lnfw), a.lnf_mean, a.lnf_rstd, m, Cx_);
  params_.commit();
  gradients_done(layout_.shape().layers, final);
}

void GptStage::gradients_done(int64_t layer, bool final) {
  if (on_microbatch_) on_microbatch_(layer);
  if (final && on_final_) on_final_(layer);
}

void GptStage::backward(int64_t chunk, int64_t microbatch, const float* doutput, float* dinput) {
  auto found = stash_.find({chunk, microbatch});
  if (found == stash_.end()) throw std::logic_error("GptStage: backward of a microbatch with no forward");
  ActivationStash stash = std::move(found->second);
  stash_.erase(found);
  Acts a;
  if (rolls()) {
    // The kept activations widened for backward's fp32 ops: the input, the head and the chunk's output
    // it reads (the layers below, one at a time).
    a = carve_rolling(chunk, stash);
    restore_region(stash, a, chunk, Region::input);
    if (model_last(chunk)) {
      if (!head_in_stash()) restore_region(stash, a, chunk, Region::head);
      restore_region(stash, a, chunk, Region::output, a.layers.size() - 1);
    }
  } else {
    a = carve(stash.data(), chunk);
  }
  std::fill(grads_.begin(), grads_.end(), 0.0f);
  Gradients views = carve_gradients(grads_.data(), chunk);
  Acts& d = views.acts;
  const bool final = microbatch == microbatches_ - 1;
  const int64_t m = stream_rows_, first = layout_.chunks()[size_t(chunk)].begin;
  LayerLinears* linears = &linears_[first_linear_[size_t(chunk)]];
  if (model_last(chunk)) {
    backward_head(microbatch, a, d, final);
  } else {
    std::copy_n(doutput, m * Cx_, d.output());
  }
  for (size_t i = a.layers.size(); i-- > 0;) {
    const float* in = i == 0 ? a.input : a.layers[i - 1].residual3;
    float* din = i == 0 ? d.input : d.layers[i - 1].residual3;
    if (i + 1 < a.layers.size()) {
      // The layer above is done with the shared buffer and with the stream buffer that held its output gradient.
      std::fill_n(views.layer, views.layer_size, 0.0f);
      std::fill_n(din, stream_rows_ * Cx_, 0.0f);
    }
    if (rolls()) restore_layer(stash, a, chunk, i);
    LayerLinears& w = linears[i];
    backward_layer(first + int64_t(i), w, i > 0 ? &linears[i - 1] : nullptr, i <= recomputed_layers(chunk),
                   a.layers[i], d.layers[i], in, din);
    if (final || on_microbatch_) {
      for (Linear4d* linear : {w.qkv.get(), w.attproj.get(), w.fc.get(), w.fcproj.get()}) linear->finish_gradient();
      gradients_done(first + int64_t(i), final);
    }
  }
  if (model_first(chunk)) {
    head_.embed_backward(params_.gradient(GptTensor::wte), params_.gradient(GptTensor::wpe), d.input,
                         all_tokens(inputs_, microbatch), rows_, first_row_, chunks_);
    gradients_done(-1, final);
  } else {
    std::copy_n(d.input, m * Cx_, dinput);
  }
  free_.push_back(std::move(stash));
}

void GptStage::backward_layer(int64_t l, LayerLinears& w, LayerLinears* below, bool below_recomputed,
                              const LayerActs& x, LayerActs& d,
                              const float* in, float* din) {
  const int64_t m = rows_, mr = stream_rows_;
  auto P = [&](GptTensor t) { return params_.weight(t, l); };
  auto G = [&](GptTensor t) { return params_.gradient(t, l); };
  auto F = [&](GptTensor t) { return params_.fp32(t, l); };
  auto FG = [&](GptTensor t) { return params_.fp32_gradient(t, l); };
  w.fcproj->prefetch(P(GptTensor::fcprojw));
  w.fc->prefetch(P(GptTensor::fcw));
  timed(times_.ops.residual, [&] { cpu::residual_backward(d.residual2, d.fcproj, d.residual3, mr * Cx_); });
  w.fcproj->backward(d.fch_gelu, G(GptTensor::fcprojw), G(GptTensor::fcprojb), d.fcproj, x.fch_gelu,
                     P(GptTensor::fcprojw), m);
  w.attproj->prefetch(P(GptTensor::attprojw));
  timed(times_.ops.gelu, [&] { cpu::gelu_backward(d.fch, d.fch_gelu, x.fch, m * 4 * Cy_); });
  w.fc->backward(d.ln2, G(GptTensor::fcw), G(GptTensor::fcb), d.fch, x.ln2_rows, P(GptTensor::fcw), m);
  norm_.backward(d.residual2, FG(GptTensor::ln2w), FG(GptTensor::ln2b), d.ln2, x.residual2, F(GptTensor::ln2w),
                 x.ln2_mean, x.ln2_rstd, mr, Cx_);
  params_.commit();
  timed(times_.ops.residual, [&] { cpu::residual_backward(din, d.attproj, d.residual2, mr * Cx_); });
  w.qkv->prefetch(P(GptTensor::qkvw));
  w.attproj->backward(d.atty, G(GptTensor::attprojw), G(GptTensor::attprojb), d.attproj, x.atty,
                      P(GptTensor::attprojw), m);
  if (ring_) {
    ring_->backward(d.qkv, d.atty, x.qkv, x.atty, x.att);  // the ring recomputes each block's probabilities
  } else {
    timed(times_.ops.attention, [&] {
      // Selective recompute (Korthikanti et al. 2022): the probabilities again from the stashed q, k, v;
      // atty comes out as it was, and attproj's backward has already read it.
      if (recompute_ == Recompute::selective) cpu::attention_forward(x.atty, x.att, x.qkv, Bz_, T_, Cy_, NHy_);
      std::fill(attention_scratch_.begin(), attention_scratch_.end(), 0.0f);
      cpu::attention_backward(d.qkv, attention_scratch_.data(), d.atty, x.qkv, x.att, Bz_, T_, Cy_, NHy_);
    });
  }
  // The layer below starts with its recompute's qkv forward, else with fcproj's backward.
  if (below && below_recomputed) below->qkv->prefetch(params_.weight(GptTensor::qkvw, l - 1));
  if (below && !below_recomputed) below->fcproj->prefetch(params_.weight(GptTensor::fcprojw, l - 1));
  w.qkv->backward(d.ln1, G(GptTensor::qkvw), G(GptTensor::qkvb), d.qkv, x.ln1_rows, P(GptTensor::qkvw), m);
  norm_.backward(din, FG(GptTensor::ln1w), FG(GptTensor::ln1b), d.ln1, in, F(GptTensor::ln1w), x.ln1_mean,
                 x.ln1_rstd, mr, Cx_);
  params_.commit();
}

size_t GptStage::recomputed_layers(int64_t chunk) const {
  const size_t layers = size_t(layout_.chunks()[size_t(chunk)].count());
  if (recompute_ != Recompute::full) return 0;
  return recompute_layers_ > 0 ? std::min(layers, size_t(recompute_layers_)) : layers;
}

void GptStage::drop(int64_t chunk, int64_t microbatch) {
  auto found = stash_.find({chunk, microbatch});
  if (found == stash_.end()) return;
  free_.push_back(std::move(found->second));
  stash_.erase(found);
}

// ---- The rolling fp32 views of bf16 and of full recompute ----
// A chunk computes in [input | one layer slot | head], every layer in the
// slot, while the stash keeps [input | output 0 | ... | output N−1 |
// layer N | ... | layer n−1 | head] at the training precision (bf16 rounds):
// of the N layers full recompute reruns (recomputed_layers; none otherwise)
// only each one's output, the next one's input (Megatron-LM's checkpoint of
// every layer's input), of the others the whole layer. Forward keeps each
// region once it is computed; layer i+1 reads layer i's output (residual3)
// from the slot, unrounded, as a GPU kernel reads its input from registers,
// and overwrites it only last, with its own output. Backward fills layer i
// into the slot (widened, or recomputed from layer i−1's kept output), then
// puts layer i−1's output over the slot's residual3, which layer i's
// backward never reads but uses as its input. The fp32 memory is one layer
// and the head, not the chunk.
namespace {

// Hands out consecutive views from `at`.
struct Taker {
  float* at;
  void operator()(float*& view, int64_t n) { view = at, at += n; }
};

}  // namespace

int64_t GptStage::region_size(Region region) const {
  int64_t used = 0;
  auto count = [&](float*&, int64_t n) { used += n; };
  if (region == Region::input || region == Region::output) return stream_rows_ * Cx_;
  if (region == Region::layer) {
    LayerActs l{};
    carve_layer(l, count, keeps_probabilities());
  } else {
    Acts a{};
    carve_head(a, count);
  }
  return used;
}

int64_t GptStage::rolling_size() const {
  return region_size(Region::input) + region_size(Region::layer) +
         (grid_.last_stage() && !head_in_stash() ? region_size(Region::head) : 0);
}

GptStage::Acts GptStage::carve_rolling(int64_t chunk, ActivationStash& stash) {
  const int64_t layer = region_size(Region::layer);
  float* slots = rolling_.data() + region_size(Region::input);
  Acts a{};
  a.input = rolling_.data();
  a.layers.resize(size_t(layout_.chunks()[size_t(chunk)].count()));
  for (LayerActs& l : a.layers) carve_layer(l, Taker{slots}, keeps_probabilities());
  if (!model_last(chunk)) return a;
  float* head = head_in_stash() ? stash.data() + (kept_size(chunk) - region_size(Region::head)) : slots + layer;
  carve_head(a, Taker{head});
  return a;
}

int64_t GptStage::kept_size(int64_t chunk) const {
  const int64_t layers = layout_.chunks()[size_t(chunk)].count(), recomputed = int64_t(recomputed_layers(chunk));
  return region_size(Region::input) + recomputed * region_size(Region::output) +
         (layers - recomputed) * region_size(Region::layer) + (model_last(chunk) ? region_size(Region::head) : 0);
}

void GptStage::region_place(const Acts& a, int64_t chunk, Region region, size_t i, size_t& offset, size_t& size,
                            float*& view) const {
  const size_t input = size_t(region_size(Region::input)), layer = size_t(region_size(Region::layer));
  const size_t recomputed = recomputed_layers(chunk), outputs = input + recomputed * size_t(region_size(Region::output));
  auto layer_offset = [&](size_t j) { return outputs + (j - recomputed) * layer; };
  if (region == Region::input) {
    offset = 0, size = input, view = a.input;
  } else if (region == Region::layer) {
    offset = layer_offset(i), size = layer, view = a.layers[i].ln1;
  } else if (region == Region::output) {
    const size_t within = size_t(a.layers[i].residual3 - a.layers[i].ln1);  // the same in the slot and the stash
    offset = i < recomputed ? input + i * size_t(region_size(Region::output)) : layer_offset(i) + within;
    size = size_t(stream_rows_ * Cx_), view = a.layers[i].residual3;
  } else {
    offset = layer_offset(a.layers.size()), size = size_t(region_size(Region::head)), view = a.lnf;
  }
}

void GptStage::restore_layer(const ActivationStash& stash, Acts& a, int64_t chunk, size_t i) {
  if (i < recomputed_layers(chunk)) {
    if (i > 0) restore_region(stash, a, chunk, Region::output, i - 1);  // its input
    forward_layers(a, chunk, i, i + 1);
  } else {
    restore_region(stash, a, chunk, Region::layer, i);
  }
  if (i > 0) restore_region(stash, a, chunk, Region::output, i - 1);  // `in`, over the slot's residual3
}

void GptStage::keep_region(ActivationStash& stash, const Acts& a, int64_t chunk, Region region, size_t i) const {
  size_t offset = 0, size = 0;
  float* view = nullptr;
  region_place(a, chunk, region, i, offset, size, view);
  stash.keep_part(view, offset, size);
}

void GptStage::restore_region(const ActivationStash& stash, const Acts& a, int64_t chunk, Region region,
                              size_t i) const {
  size_t offset = 0, size = 0;
  float* view = nullptr;
  region_place(a, chunk, region, i, offset, size, view);
  stash.restore_part(view, offset, size);
}

}  // namespace axo
