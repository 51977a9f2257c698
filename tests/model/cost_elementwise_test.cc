// The memory-bound ops of one layer, fused or eager (model/cost_elementwise.h).
#include "model/cost_elementwise.h"

#include <gtest/gtest.h>

#include "model/cost_layer.h"
#include "model/presets.h"

namespace axo {
namespace {

double total_bytes(const std::vector<ElementwiseOp>& ops) {
  double sum = 0;
  for (const ElementwiseOp& op : ops) sum += op.bytes;
  return sum;
}

double total_kernels(const std::vector<ElementwiseOp>& ops) {
  double sum = 0;
  for (const ElementwiseOp& op : ops) sum += op.kernels;
  return sum;
}

struct Case {
  TransformerSpec spec;
  MachineProfile machine;
  ParallelConfig config;
  LocalShapes shapes;
  std::vector<ElementwiseOp> ops(ElementwiseKind kind) {
    machine.elementwise = kind;
    return layer_elementwise_ops({spec, machine, config, shapes});
  }
  LayerCompute layer(ElementwiseKind kind) {
    machine.elementwise = kind;
    return layer_compute({spec, machine, config, shapes}, CostRecorder());
  }
};

Case llama_on_h100() {
  Case c{load_model("llama3-8b"), load_machine("dgx-h100"), ParallelConfig{}, {}};
  c.machine.attention = AttentionKind::flash;
  c.config.z = 8, c.config.microbatch = 16;
  c.shapes = local_shapes(c.spec, c.config);
  return c;
}

// Fused: norms, residual adds, SwiGLU and rotary embedding each read and write once.
TEST(CostElementwise, FusedOpsMoveEachTensorOnce) {
  Case c = llama_on_h100();
  const double e = 2, t = c.shapes.tokens, h = double(c.spec.hidden), f = double(c.spec.ffn_hidden);
  const double qk = t * double(c.spec.heads + c.spec.kv_heads) * c.shapes.head_dim;
  EXPECT_DOUBLE_EQ(total_bytes(c.ops(ElementwiseKind::fused)), 4 * t * h * e + 6 * t * h * e + 3 * t * f * e + 2 * qk * e);
  EXPECT_DOUBLE_EQ(total_kernels(c.ops(ElementwiseKind::fused)), 2 + 2 + 1 + 1);
}

// Eager costs more than fused by the bytes its separate kernels move: RMSNorm's
// fp32 chain, SwiGLU's silu and multiply, rotary's fp32 complex multiply and the
// attention kernel's layout copies; and the layer's time grows by those bytes at
// the achieved HBM bandwidth (backward 1.5x), plus the extra launches.
TEST(CostElementwise, EagerCostsMoreThanFusedByTheBytesMoved) {
  Case c = llama_on_h100();
  const double e = 2, t = c.shapes.tokens, h = double(c.spec.hidden), f = double(c.spec.ffn_hidden);
  const double d = c.shapes.head_dim, qk = t * double(c.spec.heads + c.spec.kv_heads) * d;
  const double norms = 2 * t * h * (24 + 4 * e) - 4 * t * h * e;
  const double swiglu = 5 * t * f * e - 3 * t * f * e;
  const double rotary = qk * (16 + 2 * e) - 2 * qk * e;
  const double layout = 2 * e * t * double(2 * c.spec.heads + 2 * c.spec.kv_heads) * d;
  const double extra_bytes = norms + swiglu + rotary + layout;
  const double extra_kernels = (16 - 2) + (2 - 1) + (6 - 1) + 4;
  const auto fused = c.ops(ElementwiseKind::fused), eager = c.ops(ElementwiseKind::eager);
  EXPECT_NEAR(total_bytes(eager) - total_bytes(fused), extra_bytes, 1e-9 * extra_bytes);
  EXPECT_DOUBLE_EQ(total_kernels(eager) - total_kernels(fused), extra_kernels);

  const double bandwidth = c.machine.hbm_bandwidth_GBps * 1e9 * c.machine.memory_bound_efficiency;
  const double extra_s = extra_bytes / bandwidth + extra_kernels * c.machine.kernel_launch_us * 1e-6;
  const LayerCompute f_layer = c.layer(ElementwiseKind::fused), e_layer = c.layer(ElementwiseKind::eager);
  EXPECT_NEAR(e_layer.forward - f_layer.forward, extra_s, 1e-9 * extra_s);
  EXPECT_NEAR(e_layer.backward - f_layer.backward, 1.5 * extra_s, 1e-9 * extra_s);
  EXPECT_DOUBLE_EQ(e_layer.forward_gemm, f_layer.forward_gemm);  // the GEMMs are the same
}

// A GeLU, layer-norm, learned-position model under materialized attention has
// nothing eager PyTorch runs differently: the same bytes either way.
TEST(CostElementwise, LayerNormGeluMaterializedIsTheSameEitherWay) {
  Case c{load_model("gpt3-13b"), load_machine("selene"), ParallelConfig{}, {}};
  c.spec.dropout = false;
  c.config.y = 4, c.config.microbatch = 2;
  c.shapes = local_shapes(c.spec, c.config);
  EXPECT_EQ(c.machine.attention, AttentionKind::materialized);
  EXPECT_DOUBLE_EQ(total_bytes(c.ops(ElementwiseKind::eager)), total_bytes(c.ops(ElementwiseKind::fused)));
  // With flash attention, eager adds only the kernel's layout copies: q, k, v in, the output out.
  c.machine.attention = AttentionKind::flash;
  const double per_rank = double(c.spec.hidden / c.config.y);
  EXPECT_DOUBLE_EQ(total_bytes(c.ops(ElementwiseKind::eager)) - total_bytes(c.ops(ElementwiseKind::fused)),
                   2 * 2 * c.shapes.tokens * 4 * per_rank);
}

// Dropout, fused into the residual add, writes only its 1-byte mask; eager runs
// it as its own kernel that reads and writes the activation too.
TEST(CostElementwise, EagerDropoutIsItsOwnKernel) {
  Case c{load_model("gpt3-13b"), load_machine("selene"), ParallelConfig{}, {}};
  c.spec.dropout = true;
  c.config.microbatch = 1;
  c.shapes = local_shapes(c.spec, c.config);
  const double hidden = c.shapes.hidden_elems, e = c.shapes.element_bytes;
  const ElementwiseOp fused = c.ops(ElementwiseKind::fused)[1], eager = c.ops(ElementwiseKind::eager)[1];
  EXPECT_DOUBLE_EQ(fused.bytes, 6 * hidden * e + 2 * hidden);
  EXPECT_DOUBLE_EQ(eager.bytes - fused.bytes, 2 * hidden * 2 * e);
  EXPECT_EQ(eager.kernels, 4);
}

}  // namespace
}  // namespace axo
