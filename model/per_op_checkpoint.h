// torchtitan's per-op selective activation checkpointing (SelectiveKind::per_op),
// the one rule the memory model (what it keeps) and the cost model (what it
// recomputes) share. Its policy saves the block's input, the attention
// kernel's output and every other matmul output in forward order, "except
// every second mm" (torchtitan models/llama3/parallelize_llama.py, _save_list):
// of wq, wk, wv, wo, w1, (w3 for SwiGLU), w2 it keeps wq, wv, w1, w2 (SwiGLU)
// or wq, wv, w1 (GeLU). In backward autograd reruns every forward op whose
// output it did not keep: the other matmuls and the memory-bound ops.
#pragma once

#include <vector>

#include "model/transformer_spec.h"

namespace axo {

struct CheckpointedMatmul {
  int linear = 0;             // the block linear it belongs to: 0 qkv, 1 attn_out, 2 mlp_up, 3 mlp_down
  double width = 0;           // output elements per token before the tensor split
  bool hidden_space = false;  // its output is a hidden-space tensor [T, h/x] (wo, w2)
  bool saved = false;         // the policy keeps its output
};

// The block's matmuls in forward order, each with whether the policy saves it.
std::vector<CheckpointedMatmul> per_op_matmuls(const TransformerSpec& spec);

}  // namespace axo
