// The memory-bound ops of one layer, fused or eager (see cost_elementwise.h).
#include "model/cost_elementwise.h"

namespace axo {

namespace {

constexpr double kFp32 = 4;  // bytes of the fp32 intermediates eager RMSNorm and rotary make

ElementwiseOp norms(const CostInputs& in, bool eager) {
  const double e = in.shapes.element_bytes, hidden = in.shapes.hidden_elems;
  if (eager && in.spec.norm == NormKind::rmsnorm) {
    // Six full-size kernels and two on the row statistics (+ eps, rsqrt) per norm.
    return {"norms (eager RMSNorm)", 2 * hidden * (6 * kFp32 + 4 * e), 2 * 8};
  }
  return {"norms", 2 * 2 * hidden * e, 2};
}

ElementwiseOp residuals(const CostInputs& in, bool eager) {
  const double e = in.shapes.element_bytes, hidden = in.shapes.hidden_elems;
  const double adds = 2 * 3 * hidden * e;
  if (!in.spec.dropout) return {"residual adds", adds, 2};
  if (eager) return {"residual adds and dropout", adds + 2 * hidden * (2 * e + 1), 4};
  return {"residual adds", adds + 2 * hidden, 2};  // dropout fused into the add, its 1-byte mask
}

ElementwiseOp activation(const CostInputs& in, bool eager) {
  const double e = in.shapes.element_bytes;
  const double ffn = in.shapes.tokens * double(in.spec.ffn_hidden / in.config.y);
  if (in.spec.mlp != MlpKind::swiglu) return {"gelu", 2 * ffn * e, 1};
  if (eager) return {"swiglu (eager: silu, then multiply)", 5 * ffn * e, 2};
  return {"swiglu", 3 * ffn * e, 1};
}

// Elements of q and k on this rank.
double query_key_elems(const CostInputs& in) {
  const TransformerSpec& s = in.spec;
  return in.shapes.tokens * double((s.heads + s.kv_heads) / in.config.y) * in.shapes.head_dim;
}

ElementwiseOp rotary(const CostInputs& in, bool eager) {
  const double e = in.shapes.element_bytes, qk = query_key_elems(in);
  if (eager) return {"rotary embedding (eager: fp32 complex multiply)", qk * (4 * kFp32 + 2 * e), 6};
  return {"rotary embedding", 2 * e * qk, 1};
}

// Eager only: q, k, v copied into the fused kernel's layout, its output copied back.
ElementwiseOp attention_layout(const CostInputs& in) {
  const TransformerSpec& s = in.spec;
  const double e = in.shapes.element_bytes;
  const double widths = double((2 * s.heads + 2 * s.kv_heads) / in.config.y) * in.shapes.head_dim;
  return {"attention layout copies (q, k, v in; output out)", 2 * e * in.shapes.tokens * widths, 4};
}

}  // namespace

std::vector<ElementwiseOp> layer_elementwise_ops(const CostInputs& in) {
  const bool eager = in.machine.elementwise == ElementwiseKind::eager;
  std::vector<ElementwiseOp> ops = {norms(in, eager), residuals(in, eager), activation(in, eager)};
  if (in.spec.positions == PositionKind::rope) ops.push_back(rotary(in, eager));
  if (eager && fused(in.machine.attention)) ops.push_back(attention_layout(in));
  return ops;
}

}  // namespace axo
