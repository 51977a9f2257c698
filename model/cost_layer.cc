// One layer's compute on one rank (see cost_layer.h).
#include "model/cost_layer.h"

#include <array>
#include <string>

#include "model/cost_attention.h"
#include "model/cost_context.h"
#include "model/cost_elementwise.h"
#include "model/cost_fp8.h"
#include "model/cost_fsdp_copies.h"
#include "model/cost_grad_accumulation.h"
#include "model/gemm_model.h"
#include "model/per_op_checkpoint.h"

namespace axo {

namespace {

constexpr CostScope kLayer = CostScope::layer;

struct Gemms {
  double forward = 0, backward = 0;
  std::array<double, 4> forward_each{};  // per linear layer
};

// Forward [T × k]·[k × n], dX [T × n]·[n × k] and dW [n × T]·[T × k] of each linear layer.
Gemms linear_gemms(const CostInputs& in, const CostRecorder& record, LayerCompute& layer) {
  const Precision p = in.spec.precision;
  Gemms sum;
  for (size_t i = 0; i < in.shapes.linears.size(); ++i) {
    const LocalLinear& l = in.shapes.linears[i];
    const std::string name = l.full.name;
    const double fwd = record.gemm(kLayer, CostPhase::forward, name, l.m, l.n, l.k,
                                   linear_gemm_seconds(in.machine, p, l.m, l.n, l.k));
    const double dx = record.gemm(kLayer, CostPhase::backward, name + " dX", l.m, l.k, l.n,
                                  linear_gemm_seconds(in.machine, p, l.m, l.k, l.n));
    const double dw = record.gemm(kLayer, CostPhase::backward, name + " dW", l.n, l.k, l.m,
                                  linear_gemm_seconds(in.machine, p, l.n, l.k, l.m));
    sum.forward += fwd;
    sum.forward_each[i] = fwd;
    sum.backward += dx + dw;
    layer.linear_dw[i] = dw;
    layer.linear_dx[i] = dx;
  }
  return sum;
}

// Attention core per local head, materialized: scores [s/c, d]·[d, s] and
// context [s/c, s]·[s, d] (with context parallelism, the rank's s/c queries
// against every key block of the ring), batched over (b/z)·(a/y) heads;
// backward runs two GEMMs of each shape. Flash: one fused kernel each way
// (cost_attention.h), over the rank's 1/c share of the causal work.
struct AttentionCore {
  double forward = 0, backward = 0;
};
AttentionCore materialized_attention(const CostInputs& in, const CostRecorder& record) {
  const Precision p = tensor_precision(in.spec.precision);
  const double rows = in.shapes.attention_batch * in.shapes.query_seq, sq = in.shapes.seq, d = in.shapes.head_dim;
  const double scores = record.gemm(kLayer, CostPhase::forward, "attention scores", rows, sq, d,
                                    gemm_seconds(in.machine, p, rows, sq, d));
  const double context = record.gemm(kLayer, CostPhase::forward, "attention context", rows, d, sq,
                                     gemm_seconds(in.machine, p, rows, d, sq));
  const double scores_backward = record.gemm(kLayer, CostPhase::backward, "attention scores dQ dK", rows, d, sq,
                                             2 * gemm_seconds(in.machine, p, rows, d, sq), 2);
  const double context_backward =
      record.gemm(kLayer, CostPhase::backward, "attention context dP dV", rows, sq, d,
                  gemm_seconds(in.machine, p, rows, sq, d) + gemm_seconds(in.machine, p, rows, d, sq), 2);
  return {scores + context, scores_backward + context_backward};
}

// The fused kernel, recorded as its computed FLOPs ([rows × s]·[s × d] GEMMs'
// worth: 2·rows·s·d each) so that --explain shows its rate.
AttentionCore fused_attention(const CostInputs& in, const CostRecorder& record) {
  const LocalShapes& x = in.shapes;
  // A context rank's queries are s/c of the sequence: 1/c of the causal work
  // (load-balanced chunks), as a batch 1/c as large over the whole sequence.
  const double batch = x.attention_batch * x.query_seq / x.seq;
  const FlashAttention a = flash_attention(in.machine, tensor_precision(in.spec.precision), batch, x.seq, x.head_dim);
  const double gemm_flops = 2 * batch * x.seq * x.seq * x.head_dim;
  return {record.gemm(kLayer, CostPhase::forward, "flash attention", batch * x.seq, x.seq, x.head_dim,
                      a.forward_s, int(a.forward_flops / gemm_flops + 0.5)),
          record.gemm(kLayer, CostPhase::backward, "flash attention backward", batch * x.seq, x.seq,
                      x.head_dim, a.backward_s, int(a.backward_flops / gemm_flops + 0.5))};
}

AttentionCore attention_core(const CostInputs& in, const CostRecorder& record) {
  return fused(in.machine.attention) ? fused_attention(in, record)
                                                      : materialized_attention(in, record);
}

// Memory-bound ops, by the bytes their forward moves; their backward reads the
// input (or output) and the incoming gradient and writes one gradient: three
// tensors where the forward moved two, so 1.5x the forward's bytes.
struct MemoryOps {
  double forward = 0, backward = 0, softmax = 0;
};
MemoryOps memory_bound_ops(const CostInputs& in, const CostRecorder& record) {
  const LocalShapes& x = in.shapes;
  const double e = x.element_bytes;
  const double attention_elems = x.attention_batch * x.query_seq * x.seq;
  // Flash attention fuses the softmax (and its dropout) into its kernel.
  const bool on_chip = fused(in.machine.attention);
  const double softmax = on_chip ? 0 : attention_elems * (2 * e + (in.spec.dropout ? 1 + 2 * e : 0));
  MemoryOps ops;
  double bytes = softmax;
  const std::vector<ElementwiseOp> elementwise = layer_elementwise_ops(in);
  for (size_t i = 0; i < elementwise.size(); ++i) {
    const ElementwiseOp& op = elementwise[i];
    bytes += op.bytes;
    ops.forward += record.memory(kLayer, CostPhase::forward, op.name, op.bytes,
                                 memory_op_seconds(in.machine, op.bytes, op.kernels));
    if (i == 1 && !on_chip) {  // the explanation's order: norms, residual adds, softmax, the rest
      ops.softmax = record.memory(kLayer, CostPhase::forward, "softmax", softmax, memory_op_seconds(in.machine, softmax, 1));
      ops.forward += ops.softmax;
    }
  }
  ops.backward = record.memory(kLayer, CostPhase::backward, "memory-bound ops (1.5x forward)", 1.5 * bytes,
                               1.5 * ops.forward);
  return ops;
}

// torchtitan's per-op selective recompute (per_op_checkpoint.h): in backward the matmuls whose
// outputs the policy did not keep run forward again, each its share of its fused linear's
// forward GEMM (wk of qkv, wo, w3 of SwiGLU's w1|w3 or GeLU's w2), with every memory-bound
// forward op; the attention kernel's output is kept.
double per_op_recompute_seconds(const CostInputs& in, const Gemms& linear, const MemoryOps& memory) {
  double seconds = memory.forward - memory.softmax;
  for (const CheckpointedMatmul& m : per_op_matmuls(in.spec)) {
    if (m.saved) continue;
    seconds += linear.forward_each[m.linear] * m.width / double(in.shapes.linears[m.linear].full.out);
  }
  return seconds;
}

}  // namespace

LayerCompute layer_compute(const CostInputs& in, const CostRecorder& record) {
  LayerCompute layer;
  const Gemms linear = linear_gemms(in, record, layer);
  const AttentionCore attention = attention_core(in, record);
  const MemoryOps memory = memory_bound_ops(in, record);
  layer.forward = linear.forward + attention.forward + memory.forward;
  layer.backward = linear.backward + attention.backward + memory.backward;
  layer.forward_gemm = linear.forward;
  layer.attention_forward = attention.forward + memory.softmax;
  layer.attention_backward = attention.backward;
  if (in.config.recompute == Recompute::full) {
    layer.recompute = layer.forward;
  } else if (in.config.recompute == Recompute::selective) {
    layer.recompute = in.machine.selective == SelectiveKind::per_op ? per_op_recompute_seconds(in, linear, memory)
                                                                     : attention.forward + memory.softmax;
  }
  if (layer.recompute > 0) {
    const char* what = in.config.recompute == Recompute::full              ? "whole layer forward again"
                       : in.machine.selective == SelectiveKind::per_op ? "unsaved matmuls and memory-bound ops again"
                                                                         : "attention core forward again";
    record.memory(kLayer, CostPhase::recompute, what, 0, layer.recompute);
  }
  layer.backward += fsdp_copy_seconds(in, record, kLayer, in.shapes.block_weights(), 2, gathered_weight_bytes(in));
  layer.backward += grad_accumulation_seconds(in, record, kLayer, in.shapes.block_weights());
  double oar_windows = 0;
  for (double dw : layer.linear_dw) oar_windows += dw;
  const RingWindows ring = ring_windows(in, layer);  // the ring's own, in backward and the recompute
  layer.backward_window = layer.backward + layer.recompute - oar_windows - ring.backward - ring.recompute;
  return layer;
}

}  // namespace axo
