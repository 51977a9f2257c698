// Local shapes of one rank (see cost_shapes.h).
#include "model/cost_shapes.h"

#include "model/vocab_parallel.h"

namespace axo {

std::array<Linear, 4> block_linears(const TransformerSpec& s) {
  return {{{"qkv", s.hidden, s.qkv_width(), false},
           {"attn_out", s.hidden, s.hidden, true},
           {"mlp_up", s.hidden, s.mlp_up_width(), false},
           {"mlp_down", s.ffn_hidden, s.hidden, true}}};
}

namespace {

LocalLinear local_linear(const Linear& l, const ParallelConfig& c, double tokens) {
  LocalLinear local;
  local.full = l;
  local.in_dim = l.transposed ? GridDim::y : GridDim::x;
  local.out_dim = l.transposed ? GridDim::x : GridDim::y;
  local.m = tokens;
  local.n = double(l.out / c.size(local.out_dim));
  local.k = double(l.in / c.size(local.in_dim));
  local.in_split = double(c.size(local.in_dim));
  local.out_split = double(c.size(local.out_dim));
  local.block = double(l.in) * double(l.out) / (local.in_split * local.out_split);
  return local;
}

}  // namespace

LocalShapes local_shapes(const TransformerSpec& s, const ParallelConfig& c) {
  LocalShapes shapes;
  shapes.element_bytes = bytes_per_element(s.precision);
  shapes.tokens = tokens_per_rank(s, c);
  shapes.hidden_local = double(s.hidden / c.x);
  const double token_split = c.sequence_parallel ? double(c.y) : 1.0;
  shapes.hidden_elems = shapes.tokens * shapes.hidden_local / token_split;
  shapes.attention_batch = double(c.microbatch / c.z) * double(s.heads / c.y);
  shapes.seq = double(s.seq_len);
  shapes.query_seq = double(s.seq_len / c.context);
  shapes.head_dim = double(s.head_dim());
  const std::array<Linear, 4> linears = block_linears(s);
  for (size_t i = 0; i < linears.size(); ++i) shapes.linears[i] = local_linear(linears[i], c, shapes.tokens);
  shapes.vocab_local = double(padded_vocab(s, c.y) / c.y);
  return shapes;
}

double tokens_per_rank(const TransformerSpec& s, const ParallelConfig& c) {
  return double(c.microbatch) * double(s.seq_len) / double(c.z * c.context);
}

double memory_op_seconds(const MachineProfile& machine, double bytes, double kernels) {
  const double bytes_per_s = machine.hbm_bandwidth_GBps * 1e9 * machine.memory_bound_efficiency;
  const double launch = machine.kernel_launch_us * 1e-6;
  return bytes / bytes_per_s + kernels * launch;
}

}  // namespace axo
