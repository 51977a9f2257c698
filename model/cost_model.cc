// The 4D cost model (see cost_model.h for the formulas and their sources).
#include "model/cost_model.h"

#include <algorithm>
#include <array>
#include <functional>

#include "model/gemm_model.h"
#include "model/memory_model.h"

namespace axo {

namespace {

// A linear layer Y = X·Wᵀ, W: [out, in]. A plain layer splits `in` over X and
// `out` over Y; a transposed one swaps the two (ARCHITECTURE.md).
struct Linear {
  const char* name;
  int64_t in, out;
  bool transposed;
};

std::array<Linear, 4> block_linears(const TransformerSpec& s) {
  return {{{"qkv", s.hidden, s.qkv_width(), false},
           {"attn_out", s.hidden, s.hidden, true},
           {"mlp_up", s.hidden, s.mlp_up_width(), false},
           {"mlp_down", s.ffn_hidden, s.hidden, true}}};
}

const char* dim_name(GridDim d) {
  static constexpr const char* names[] = {"x", "y", "z", "data", "pipeline"};
  return names[static_cast<int>(d)];
}

// How a collective's time is exposed when overlap is on.
enum class Exposure {
  exposed,        // on the critical path
  prefetch_fwd,   // weight all-gather prefetched under the forward GEMMs (OAG)
  oar,            // dX all-reduce under the same layer's dW GEMM (OAR)
  async_bwd,      // dW reduce-scatter and backward prefetch under the backward (ORS, OAG)
};

// Records items when a list is given; cheap no-op otherwise.
struct Recorder {
  std::vector<CostItem>* items;
  const char* scope;
  void gemm(const char* phase, const std::string& name, double m, double n, double k,
            double seconds, double per_microbatch) const {
    if (!items) return;
    CostItem item;
    item.scope = scope;
    item.phase = phase;
    item.kind = "gemm";
    item.name = name + " [" + std::to_string(int64_t(m)) + "x" + std::to_string(int64_t(n)) + "x" +
                std::to_string(int64_t(k)) + "]";
    item.flops = 2 * m * n * k;
    item.seconds = item.exposed = seconds;
    item.per_iteration = per_microbatch;
    items->push_back(item);
  }
  void memory(const char* phase, const std::string& name, double bytes, double seconds,
              double per_microbatch) const {
    if (!items) return;
    CostItem item;
    item.scope = scope;
    item.phase = phase;
    item.kind = "memory";
    item.name = name;
    item.bytes = bytes;
    item.bandwidth_GBps = bytes / seconds / 1e9;
    item.seconds = item.exposed = seconds;
    item.per_iteration = per_microbatch;
    items->push_back(item);
  }
};

}  // namespace

size_t CostModel::ComputeKeyHash::operator()(const ComputeKey& k) const {
  size_t h = std::hash<int64_t>()(k.x);
  for (int64_t v : {k.y, k.z, k.microbatch, int64_t(k.recompute), int64_t(k.sequence_parallel)}) {
    h = h * 1000003u ^ std::hash<int64_t>()(v);
  }
  return h;
}

CostModel::CostModel(TransformerSpec spec, MachineProfile machine)
    : spec_(std::move(spec)), machine_(std::move(machine)) {}

int64_t CostModel::microbatches(const ParallelConfig& c) const {
  return spec_.global_batch / (c.data * c.microbatch);
}

std::string CostModel::check(const ParallelConfig& c) const {
  auto divides = [](const char* a, int64_t av, const char* b, int64_t bv) -> std::string {
    if (bv % av == 0) return "";
    return std::string(a) + "=" + std::to_string(av) + " does not divide " + b + "=" +
           std::to_string(bv);
  };
  for (const std::string& problem :
       {divides("pipeline*interleave", c.pipeline * c.interleave, "layers", spec_.layers),
        divides("data*microbatch", c.data * c.microbatch, "global_batch", spec_.global_batch),
        divides("z", c.z, "microbatch", c.microbatch), divides("y", c.y, "heads", spec_.heads),
        divides("y", c.y, "kv_heads", spec_.kv_heads), divides("x", c.x, "hidden", spec_.hidden),
        divides("y", c.y, "hidden", spec_.hidden), divides("y", c.y, "ffn_hidden", spec_.ffn_hidden)}) {
    if (!problem.empty()) return problem;
  }
  for (const Linear& l : block_linears(spec_)) {
    const int64_t block = (l.out / (l.transposed ? c.x : c.y)) * (l.in / (l.transposed ? c.y : c.x));
    if (l.out % (l.transposed ? c.x : c.y) != 0) {
      return std::string(l.transposed ? "x" : "y") + " does not divide the " + l.name + " width " +
             std::to_string(l.out);
    }
    if (block % c.z != 0) {
      return "z=" + std::to_string(c.z) + " does not divide the " + l.name + " weight block of " +
             std::to_string(block) + " elements";
    }
  }
  if (c.sequence_parallel && (c.x != 1 || c.z != 1 || c.y == 1)) {
    return "sequence parallelism needs x=1, z=1 and y>1 (Megatron-style 1D tensor parallelism)";
  }
  if (c.interleave > 1) {
    if (c.pipeline == 1) return "interleave>1 needs pipeline>1";
    if (microbatches(c) % c.pipeline != 0) {
      return divides("pipeline", c.pipeline, "microbatches (interleaved schedule)", microbatches(c));
    }
  }
  return "";
}

const CostModel::LocalCompute& CostModel::local_compute(const ParallelConfig& c,
                                                        std::vector<CostItem>* items) const {
  const ComputeKey key{c.x, c.y, c.z, c.microbatch, c.recompute, c.sequence_parallel};
  if (!items) {
    auto found = compute_cache_.find(key);
    if (found != compute_cache_.end()) return found->second;
  }
  return compute_cache_[key] = compute_local(c, items);
}

CostModel::LocalCompute CostModel::compute_local(const ParallelConfig& c,
                                                 std::vector<CostItem>* items) const {
  const TransformerSpec& s = spec_;
  const Precision p = s.precision;
  const double e = bytes_per_element(p);
  const double tokens = double(c.microbatch * s.seq_len / c.z);
  const double token_split = c.sequence_parallel ? double(c.y) : 1.0;
  const double hidden_elems = tokens * double(s.hidden / c.x) / token_split;
  const double memory_Bps = machine_.hbm_bandwidth_GBps * 1e9 * machine_.memory_bound_efficiency;
  const double launch = machine_.kernel_launch_us * 1e-6;
  auto memory_op = [&](double bytes, double kernels) { return bytes / memory_Bps + kernels * launch; };
  const Recorder layer{items, "layer"};
  LocalCompute lc;

  // The four linear layers: forward, data gradient, weight gradient.
  double forward_gemm = 0, backward_gemm = 0;
  const auto linears = block_linears(s);
  for (size_t i = 0; i < linears.size(); ++i) {
    const Linear& l = linears[i];
    const double m = tokens;
    const double n = double(l.out / (l.transposed ? c.x : c.y));
    const double k = double(l.in / (l.transposed ? c.y : c.x));
    const double fwd = gemm_seconds(machine_, p, m, n, k);
    const double dx = gemm_seconds(machine_, p, m, k, n);
    const double dw = gemm_seconds(machine_, p, n, k, m);
    layer.gemm("forward", std::string(l.name), m, n, k, fwd, 1);
    layer.gemm("backward", std::string(l.name) + " dX", m, k, n, dx, 1);
    layer.gemm("backward", std::string(l.name) + " dW", n, k, m, dw, 1);
    forward_gemm += fwd;
    backward_gemm += dx + dw;
    lc.linear_dw[i] = dw;
    lc.linear_dx[i] = dx;
  }

  // Attention core: per local head, scores [s, d]·[d, s] and context [s, s]·[s, d],
  // batched over (b/z)·(a/y) heads; backward runs two GEMMs of each shape.
  const double batch = double(c.microbatch / c.z) * double(s.heads / c.y);
  const double sq = double(s.seq_len), d = double(s.head_dim());
  const double scores = gemm_seconds(machine_, p, batch * sq, sq, d);
  const double context = gemm_seconds(machine_, p, batch * sq, d, sq);
  const double scores_bwd = 2 * gemm_seconds(machine_, p, batch * sq, d, sq);
  const double context_bwd = gemm_seconds(machine_, p, batch * sq, sq, d) +
                             gemm_seconds(machine_, p, batch * sq, d, sq);
  layer.gemm("forward", "attention scores", batch * sq, sq, d, scores, 1);
  layer.gemm("forward", "attention context", batch * sq, d, sq, context, 1);
  layer.gemm("backward", "attention scores dQ dK", batch * sq, d, sq, scores_bwd, 1);
  layer.gemm("backward", "attention context dP dV", batch * sq, sq, d, context_bwd, 1);

  // Memory-bound ops, forward bytes. Their backward reads the input (or
  // output) and the incoming gradient and writes one gradient: three tensors
  // where the forward moved two, so 1.5x the forward's bytes.
  const double attention_elems = batch * sq * sq;
  const double column_ffn = tokens * double(s.ffn_hidden / c.y);
  const double norms = 2 * 2 * hidden_elems * e;
  const double residuals = 2 * 3 * hidden_elems * e + (s.dropout ? 2 * hidden_elems : 0);
  const double softmax = attention_elems * (2 * e + (s.dropout ? 1 + 2 * e : 0));
  const double activation = column_ffn * e * (s.mlp == MlpKind::swiglu ? 3 : 2);
  const double rope = s.positions == PositionKind::rope
                          ? 2 * e * tokens * double((s.heads + s.kv_heads) / c.y) * d
                          : 0;
  const double norm_t = memory_op(norms, 2), residual_t = memory_op(residuals, 2);
  const double softmax_t = memory_op(softmax, 1), activation_t = memory_op(activation, 1);
  const double rope_t = rope > 0 ? memory_op(rope, 1) : 0;
  layer.memory("forward", "norms", norms, norm_t, 1);
  layer.memory("forward", "residual adds", residuals, residual_t, 1);
  layer.memory("forward", "softmax", softmax, softmax_t, 1);
  layer.memory("forward", s.mlp == MlpKind::swiglu ? "swiglu" : "gelu", activation, activation_t, 1);
  if (rope > 0) layer.memory("forward", "rotary embedding", rope, rope_t, 1);
  const double memory_forward = norm_t + residual_t + softmax_t + activation_t + rope_t;
  const double memory_backward = 1.5 * memory_forward;
  layer.memory("backward", "memory-bound ops (1.5x forward)",
               1.5 * (norms + residuals + softmax + activation + rope), memory_backward, 1);

  lc.layer_forward = forward_gemm + scores + context + memory_forward;
  lc.layer_backward = backward_gemm + scores_bwd + context_bwd + memory_backward;
  lc.layer_forward_gemm = forward_gemm;
  if (c.recompute == Recompute::full) {
    lc.layer_recompute = lc.layer_forward;
  } else if (c.recompute == Recompute::selective) {
    lc.layer_recompute = scores + context + softmax_t;
  }
  if (items && lc.layer_recompute > 0) {
    layer.memory("recompute", c.recompute == Recompute::full ? "whole layer forward again"
                                                                 : "attention core forward again",
                 0, lc.layer_recompute, 1);
  }
  double oar_windows = 0;
  for (double dw : lc.linear_dw) oar_windows += dw;
  lc.layer_backward_window = lc.layer_backward + lc.layer_recompute - oar_windows;

  // First stage: embedding lookup (read a row, write the activation) and its scatter-add backward.
  const Recorder first{items, "first stage"};
  const double embedding_bytes = 2 * tokens * double(s.hidden / c.x) * e;
  lc.first_forward = memory_op(embedding_bytes, 1);
  lc.first_backward = memory_op(2 * embedding_bytes, 1);
  first.memory("forward", "embedding lookup", embedding_bytes, lc.first_forward, 1);
  first.memory("backward", "embedding scatter-add", 2 * embedding_bytes, lc.first_backward, 1);

  // Last stage: final norm, LM head (a plain linear over the padded vocabulary), fp32 cross-entropy.
  const Recorder last{items, "last stage"};
  const double vocab_local = double(padded_vocab(s, c.y) / c.y);
  const double head_k = double(s.hidden / c.x);
  const double head_fwd = gemm_seconds(machine_, p, tokens, vocab_local, head_k);
  const double head_dx = gemm_seconds(machine_, p, tokens, head_k, vocab_local);
  const double head_dw = gemm_seconds(machine_, p, vocab_local, head_k, tokens);
  last.gemm("forward", "lm head", tokens, vocab_local, head_k, head_fwd, 1);
  last.gemm("backward", "lm head dX", tokens, head_k, vocab_local, head_dx, 1);
  last.gemm("backward", "lm head dW", vocab_local, head_k, tokens, head_dw, 1);
  const double logits = tokens * vocab_local;
  const double loss_bytes = logits * (e + 4 + 4);  // read logits, write fp32 softmax, read it back
  const double loss_t = memory_op(loss_bytes, 2);
  const double final_norm_t = memory_op(2 * hidden_elems * e, 1);
  last.memory("forward", "final norm", 2 * hidden_elems * e, final_norm_t, 1);
  last.memory("forward", "cross-entropy", loss_bytes, loss_t, 1);
  lc.last_forward = head_fwd + loss_t + final_norm_t;
  lc.last_backward = head_dx + head_dw + loss_t + 2 * final_norm_t;
  return lc;
}

Breakdown CostModel::evaluate(const ParallelConfig& config) const { return cost(config, nullptr); }

double CostModel::compute_lower_bound(const ParallelConfig& c) const {
  const LocalCompute& lc = local_compute(c, nullptr);
  return double(microbatches(c)) * double(spec_.layers / c.pipeline) *
         (lc.layer_forward + lc.layer_backward + lc.layer_recompute);
}

Breakdown CostModel::explain(const ParallelConfig& config, std::vector<CostItem>& items) const {
  items.clear();
  return cost(config, &items);
}

Breakdown CostModel::cost(const ParallelConfig& c, std::vector<CostItem>* items) const {
  const TransformerSpec& s = spec_;
  const LocalCompute& lc = local_compute(c, items);
  const double e = bytes_per_element(s.precision);
  const double tokens = double(c.microbatch * s.seq_len / c.z);
  const int64_t gpn = machine_.gpus_per_node;
  const bool sp = c.sequence_parallel;

  // Of `t` seconds of communication overlapped with a `window` of compute, the
  // part that hides: all of it that fits, scaled by the machine's overlap efficiency.
  auto hidden = [&](double t, double window) { return machine_.overlap_efficiency * std::min(t, window); };
  // Collectives of one layer per microbatch, summed by how they are exposed.
  struct Sums {
    double exposed = 0, prefetch = 0, async = 0, oar_exposed = 0, oar_total = 0;
  } fwd, bwd, rec;
  struct Pending {
    size_t item;
    Sums* sums;
    Exposure exposure;
  };
  std::vector<Pending> pending;
  auto collective = [&](Sums& sums, Exposure exposure, double window, const char* scope,
                        const char* phase, CollectiveOp op, GridDim dim, double elements,
                        double element_bytes, const char* what, const char* layer_name = nullptr) {
    const GroupPlacement group = place_group(c.size(dim), c.stride(dim), gpn);
    const double bytes = elements * element_bytes;
    const double t = collective_seconds(machine_, op, group, bytes);
    if (t <= 0) return;
    switch (exposure) {
      case Exposure::exposed: sums.exposed += t; break;
      case Exposure::prefetch_fwd: sums.prefetch += t; break;
      case Exposure::async_bwd: sums.async += t; break;
      case Exposure::oar:
        sums.oar_total += t;
        sums.oar_exposed += t - hidden(t, window);
        break;
    }
    if (!items) return;
    CostItem item;
    item.scope = scope;
    item.phase = phase;
    item.kind = "collective";
    item.name = std::string(to_string(op)) + " " + what;
    if (layer_name) item.name += std::string(" (") + layer_name + ")";
    item.group = dim_name(dim);
    item.group_size = group.size;
    item.ranks_per_node = group.ranks_per_node;
    item.bytes = bytes;
    item.bandwidth_GBps = link_estimate(machine_, op, group, bytes).bus_bandwidth_Bps / 1e9;
    item.seconds = t;
    item.per_iteration = 1;
    pending.push_back({items->size(), &sums, exposure});
    items->push_back(item);
  };

  // The 4D layer's collectives (ARCHITECTURE.md table), per linear layer.
  const auto linears = block_linears(s);
  for (size_t i = 0; i < linears.size(); ++i) {
    const Linear& l = linears[i];
    const GridDim in_dim = l.transposed ? GridDim::y : GridDim::x;
    const GridDim out_dim = l.transposed ? GridDim::x : GridDim::y;
    const double in_split = double(c.size(in_dim)), out_split = double(c.size(out_dim));
    const double block = double(l.in) * double(l.out) / (in_split * out_split);
    for (Sums* pass : {&fwd, &rec}) {
      if (pass == &rec && c.recompute != Recompute::full) continue;
      const char* phase = pass == &fwd ? "forward" : "recompute";
      collective(*pass, Exposure::prefetch_fwd, 0, "layer", phase, CollectiveOp::all_gather,
                 GridDim::z, block, e, "weights", l.name);
      if (sp && !l.transposed) {
        collective(*pass, Exposure::exposed, 0, "layer", phase, CollectiveOp::all_gather, GridDim::y,
                   tokens * double(l.in), e, "sequence-parallel input", l.name);
      } else if (sp) {
        collective(*pass, Exposure::exposed, 0, "layer", phase, CollectiveOp::reduce_scatter,
                   GridDim::y, tokens * double(l.out), e, "partial sums", l.name);
      } else {
        collective(*pass, Exposure::exposed, 0, "layer", phase, CollectiveOp::all_reduce, in_dim,
                   tokens * double(l.out) / out_split, e, "partial sums", l.name);
      }
    }
    collective(bwd, Exposure::async_bwd, 0, "layer", "backward", CollectiveOp::all_gather,
               GridDim::z, block, e, "weights", l.name);
    if (sp && !l.transposed) {
      // Megatron-LM keeps only the sequence-split input and gathers it again
      // for the weight gradient, under the dX GEMM.
      collective(bwd, Exposure::oar, lc.linear_dx[i], "layer", "backward", CollectiveOp::all_gather,
                 GridDim::y, tokens * double(l.in), e, "input again for dW", l.name);
      collective(bwd, Exposure::oar, lc.linear_dw[i], "layer", "backward",
                 CollectiveOp::reduce_scatter, GridDim::y, tokens * double(l.in), e, "dX", l.name);
    } else if (sp) {
      collective(bwd, Exposure::exposed, 0, "layer", "backward", CollectiveOp::all_gather,
                 GridDim::y, tokens * double(l.out), e, "output gradient", l.name);
    } else {
      collective(bwd, Exposure::oar, lc.linear_dw[i], "layer", "backward", CollectiveOp::all_reduce,
                 out_dim, tokens * double(l.in) / in_split, e, "dX", l.name);
    }
    collective(bwd, Exposure::async_bwd, 0, "layer", "backward", CollectiveOp::reduce_scatter,
               GridDim::z, block, e, "dW", l.name);
  }
  // LayerNorm over a hidden split across X: mean and variance (fp32) all-reduced.
  for (Sums* pass : {&fwd, &rec, &bwd}) {
    if (pass == &rec && c.recompute != Recompute::full) continue;
    const char* phase = pass == &fwd ? "forward" : pass == &rec ? "recompute" : "backward";
    for (int norm = 0; norm < 2; ++norm) {
      collective(*pass, Exposure::exposed, 0, "layer", phase, CollectiveOp::all_reduce, GridDim::x,
                 2 * tokens, 4, "norm statistics");
    }
  }

  auto exposed = [&](const Sums& sums, double window) {
    if (!c.overlap) return sums.exposed + sums.prefetch + sums.async + sums.oar_total;
    const double pooled = sums.prefetch + sums.async;
    return sums.exposed + sums.oar_exposed + pooled - hidden(pooled, window);
  };
  const double layer_tp_fwd = exposed(fwd, lc.layer_forward_gemm);
  const double layer_tp_rec = exposed(rec, lc.layer_forward_gemm);
  const double layer_tp_bwd = exposed(bwd, lc.layer_backward_window);

  // Stage extras: embedding all-reduce over Y (vocabulary-parallel), LM head and loss.
  Sums first_fwd, last_fwd, last_bwd;
  const double vocab_local = double(padded_vocab(s, c.y) / c.y);
  const double head_block = double(s.hidden / c.x) * vocab_local;
  collective(first_fwd, Exposure::exposed, 0, "first stage", "forward", CollectiveOp::all_reduce,
             GridDim::y, tokens * double(s.hidden / c.x), e, "embedding output");
  collective(first_fwd, Exposure::exposed, 0, "first stage", "forward", CollectiveOp::all_gather,
             GridDim::z, head_block, e, "embedding weights");
  collective(last_fwd, Exposure::exposed, 0, "last stage", "forward", CollectiveOp::all_gather,
             GridDim::z, head_block, e, "lm head weights");
  collective(last_fwd, Exposure::exposed, 0, "last stage", "forward", CollectiveOp::all_reduce,
             GridDim::x, tokens * vocab_local, e, "partial logits");
  collective(last_fwd, Exposure::exposed, 0, "last stage", "forward", CollectiveOp::all_reduce,
             GridDim::y, 2 * tokens, 4, "loss max and sum");
  collective(last_bwd, Exposure::exposed, 0, "last stage", "backward", CollectiveOp::all_reduce,
             GridDim::y, tokens * double(s.hidden / c.x), e, "lm head dX");
  collective(last_bwd, Exposure::exposed, 0, "last stage", "backward", CollectiveOp::reduce_scatter,
             GridDim::z, head_block, e, "lm head dW");

  // Per-microbatch time of each kind of stage; the slowest sets the pace.
  const double layers_per_stage = double(s.layers / c.pipeline);
  const double layer_compute = lc.layer_forward + lc.layer_backward + lc.layer_recompute;
  const double layer_tp = layer_tp_fwd + layer_tp_rec + layer_tp_bwd;
  const double body_compute = layers_per_stage * layer_compute;
  const double body_tp = layers_per_stage * layer_tp;
  const double first_compute = lc.first_forward + lc.first_backward;
  const double first_tp = first_fwd.exposed;
  const double last_compute = lc.last_forward + lc.last_backward;
  const double last_tp = last_fwd.exposed + last_bwd.exposed;
  double stage_compute, stage_tp;
  if (c.pipeline == 1) {
    stage_compute = body_compute + first_compute + last_compute;
    stage_tp = body_tp + first_tp + last_tp;
  } else if (first_compute + first_tp >= last_compute + last_tp) {
    stage_compute = body_compute + first_compute;
    stage_tp = body_tp + first_tp;
  } else {
    stage_compute = body_compute + last_compute;
    stage_tp = body_tp + last_tp;
  }
  const double m = double(microbatches(c));
  const double stage_time = stage_compute + stage_tp;
  const double stage_backward = layers_per_stage * (lc.layer_backward + lc.layer_recompute);

  Breakdown b;
  b.compute = m * stage_compute;
  b.tp_comm = m * stage_tp;
  b.bubble = c.pipeline > 1 ? double(c.pipeline - 1) / double(c.interleave) * stage_time : 0;

  // Pipeline point-to-point: one activation forward and one gradient backward
  // per microbatch and chunk boundary, plus the fill and drain. The activation
  // [T, h/x] is replicated over Y, so each Y rank sends 1/y of it and the
  // receiver all-gathers it over Y (Megatron-LM's scatter-gather); with
  // sequence parallelism it is already split over Y.
  const Recorder step_items{items, "step"};
  if (c.pipeline > 1) {
    const GroupPlacement pipe = place_group(c.pipeline, c.stride(GridDim::pipeline), gpn);
    const GroupPlacement pair{2, pipe.intra_node() ? 2 : 1};
    const double activation = tokens * double(s.hidden / c.x) * e;
    const double bytes = activation / double(c.y);
    const double count = 2 * (double(c.interleave) * m + double(c.pipeline - 1));
    const double send = collective_seconds(machine_, CollectiveOp::send_recv, pair, bytes);
    const double gather =
        sp ? 0
           : collective_seconds(machine_, CollectiveOp::all_gather,
                                place_group(c.y, c.stride(GridDim::y), gpn), activation);
    b.pp_comm = count * (send + gather);
    if (items) {
      CostItem item;
      item.scope = "step";
      item.phase = "forward+backward";
      item.kind = "p2p";
      item.name = gather > 0 ? "send/recv 1/y of activations and gradients, all-gather over y"
                             : "send/recv activations and gradients";
      item.group = "pipeline";
      item.group_size = 2;
      item.ranks_per_node = pair.ranks_per_node;
      item.bytes = bytes;
      item.bandwidth_GBps =
          link_estimate(machine_, CollectiveOp::send_recv, pair, bytes).bus_bandwidth_Bps / 1e9;
      item.seconds = item.exposed = send + gather;
      item.per_iteration = count;
      items->push_back(item);
    }
  }

  // Data parallelism: the stage's gradient shard, all-reduced in buckets
  // under the last microbatch's backward; the last bucket is always exposed.
  const double local_params =
      double(std::max(first_stage_params(s, c), last_stage_params(s, c))) / double(c.x * c.y * c.z);
  Sums dp;
  collective(dp, Exposure::exposed, 0, "step", "step", CollectiveOp::all_reduce, GridDim::data,
             local_params, e, "gradients");
  const double dp_full = dp.exposed;
  if (dp_full > 0) {
    const double window = stage_backward * (layers_per_stage - 1) / layers_per_stage;
    b.dp_comm = dp_full - hidden(dp_full * (layers_per_stage - 1) / layers_per_stage, window);
  }
  if (c.pipeline > 1 && s.tied_embeddings) {
    // The first and last stages each hold the tied embedding and sum its gradient.
    const int64_t apart = c.stride(GridDim::pipeline) * (c.pipeline - 1);
    const GroupPlacement pair = place_group(2, apart, gpn);
    const double bytes = double(s.vocab) * double(s.hidden) / double(c.x * c.y * c.z) * e;
    const double t = collective_seconds(machine_, CollectiveOp::all_reduce, pair, bytes);
    b.dp_comm += t;
    if (items) {
      CostItem item;
      item.scope = "step";
      item.phase = "step";
      item.kind = "collective";
      item.name = "all_reduce tied embedding gradient (first and last stage)";
      item.group = "pipeline";
      item.group_size = 2;
      item.ranks_per_node = pair.ranks_per_node;
      item.bytes = bytes;
      item.seconds = item.exposed = t;
      item.per_iteration = 1;
      items->push_back(item);
    }
  }

  // Optimizer: the mixed-precision Adam step as Megatron-LM runs it on the
  // device moves 28 + 4e bytes per parameter: gradient norm and overflow check
  // (read the gradient twice), Adam (read the gradient, read and write the
  // fp32 master and both moments), copy to the low-precision weight (read
  // the master, write the weight).
  // With offload it runs on the host, and gradients go down and weights up.
  if (c.offload) {
    b.optimizer = local_params / machine_.cpu_optimizer_params_per_s;
    const double down = local_params * e / (machine_.device_to_host_GBps * 1e9);
    const double up = local_params * e / (machine_.host_to_device_GBps * 1e9);
    b.offload = std::max(0.0, down - dp_full) + up;
    step_items.memory("step", "offload: gradients to host, weights back", 2 * local_params * e,
                      down + up, 1);
    step_items.memory("step", "Adam on the host", 0, b.optimizer, 1);
  } else {
    const double bytes = local_params * (28 + 4 * e);
    b.optimizer = bytes / (machine_.hbm_bandwidth_GBps * 1e9 * machine_.memory_bound_efficiency) +
                  machine_.kernel_launch_us * 1e-6;
    step_items.memory("step", "Adam on the device", bytes, b.optimizer, 1);
  }

  b.iter_time = b.compute + b.tp_comm + b.bubble + b.pp_comm + b.dp_comm + b.offload + b.optimizer;
  b.layer_forward = lc.layer_forward + layer_tp_fwd;
  b.layer_backward = lc.layer_backward + lc.layer_recompute + layer_tp_rec + layer_tp_bwd;
  const double peak = machine_.peak_tflops(s.precision);
  b.tflops_per_gpu = s.model_flops_per_iteration() / double(c.gpus()) / b.iter_time / 1e12;
  b.pct_peak = 100.0 * b.tflops_per_gpu / peak;
  b.memory = memory_per_device(s, c);
  b.memory_capacity = machine_.usable_memory_bytes();
  b.fits = b.memory.total() <= b.memory_capacity;

  if (items) {
    // Exposed shares of overlapped collectives, and counts per iteration.
    for (const Pending& p : pending) {
      CostItem& item = (*items)[p.item];
      const Sums& sums = *p.sums;
      const double pooled = sums.prefetch + sums.async;
      const double window = p.sums == &bwd ? lc.layer_backward_window : lc.layer_forward_gemm;
      if (p.sums == &dp) {
        item.exposed = b.dp_comm;
      } else if (!c.overlap || p.exposure == Exposure::exposed) {
        item.exposed = item.seconds;
      } else if (p.exposure == Exposure::oar) {
        item.exposed = item.seconds * sums.oar_exposed / sums.oar_total;
      } else {
        item.exposed = item.seconds * (pooled - hidden(pooled, window)) / pooled;
      }
    }
    for (CostItem& item : *items) {
      if (item.scope == "layer") item.per_iteration *= layers_per_stage * m;
      if (item.scope == "first stage" || item.scope == "last stage") item.per_iteration *= m;
      if (item.kind == "gemm") item.bandwidth_GBps = item.flops / item.seconds / 1e12;
    }
  }
  return b;
}

}  // namespace axo
