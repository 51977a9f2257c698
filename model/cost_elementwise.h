// The memory-bound ops of one transformer layer's forward, as the training
// stack runs them (stack.elementwise, machine_profile.h): each op's bytes
// through HBM and its kernel launches, for cost_layer.h to time. The softmax
// of materialized attention is priced there, not here.
//
// fused (Megatron-LM, Transformer Engine, torch.compile): each op one kernel
// that reads its inputs and writes its output once —
//   two norms, read and write [T×h/x] each: 2·2·T·h·e;
//   two residual adds, read two write one: 2·3·T·h·e (+ 1-byte dropout masks);
//   the MLP activation, GeLU read f write f, SwiGLU read 2f write f (f = T·ffn/y);
//   rotary embedding, read and write q and k once.
// eager (PyTorch without compilation: llm-foundry's MPTBlock, torchtitan's Llama)
// adds what its operators move one at a time —
//   RMSNorm as the reference module writes it (torchtitan models/norms.py,
//   Llama's model.py: x.float(), pow(2), mean(-1), x·rsqrt(·), type_as(x), ·weight):
//   per element e+4, 4+4, 4, 4+4, 4+e, e+e bytes = 24 + 4e, 8 kernels; layer norm is
//   one aten kernel in both;
//   SwiGLU as silu(w1 x) then · w3 x: read f write f, read 2f write f = 5f·e;
//   rotary as torchtitan's apply_rotary_emb: q and k upcast to fp32, the complex
//   multiply, the cast back: (e+4) + (4+4) + (4+e) = 16 + 2e bytes per element;
//   dropout as its own kernel (nn.Dropout): read e, write e and the 1-byte mask;
//   the fused attention kernel's layout: q, k and v copied in and the output
//   copied out (llm-foundry flash_attn_fn's index_first_axis and pad_input;
//   torchtitan's repeat_kv and the output's transpose(1, 2).contiguous()).
#pragma once

#include <vector>

#include "model/cost_shapes.h"

namespace axo {

struct ElementwiseOp {
  const char* name;
  double bytes = 0;    // through HBM, forward
  double kernels = 0;  // launches, forward
};

// The layer's forward memory-bound ops under the machine's stack.elementwise.
std::vector<ElementwiseOp> layer_elementwise_ops(const CostInputs& in);

}  // namespace axo
