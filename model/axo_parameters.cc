// The parameters of a rank of axo's executor (see axo_parameters.h).
#include "model/axo_parameters.h"

#include <cmath>

#include "model/vocab_parallel.h"

namespace axo {

std::array<AxoLinearBlock, 4> axo_linear_blocks(const TransformerSpec& spec, const ParallelConfig& c) {
  const double h = double(spec.hidden), x = double(c.x), y = double(c.y);
  return {AxoLinearBlock{double(spec.qkv_width()) / y, h / x}, AxoLinearBlock{h / x, h / y},
          AxoLinearBlock{double(spec.mlp_up_width()) / y, h / x}, AxoLinearBlock{h / x, double(spec.ffn_hidden) / y}};
}

double AxoParams::summed_beyond_data(const ParallelConfig& c) const {
  if (c.z > 1) return rows + other;
  return c.sequence_parallel && c.y > 1 ? rows : 0;
}

AxoParams& AxoParams::operator+=(const AxoParams& o) {
  linear += o.linear, rows += o.rows, other += o.other;
  return *this;
}

AxoParams operator*(double count, const AxoParams& p) { return {count * p.linear, count * p.rows, count * p.other}; }

namespace {

// A norm's elements on a rank: its weight (and a LayerNorm's bias) over x.
double norm_params(const TransformerSpec& spec, const ParallelConfig& c) {
  return (spec.norm == NormKind::layernorm ? 2.0 : 1.0) * double(spec.hidden) / double(c.x);
}

}  // namespace

double axo_vocabulary_params(const TransformerSpec& spec, const ParallelConfig& c) {
  return double(padded_vocab(spec, c.y) / c.y) * double(spec.hidden) / double(c.x);
}

AxoParams axo_layer_params(const TransformerSpec& spec, const ParallelConfig& c) {
  AxoParams p;
  const auto blocks = axo_linear_blocks(spec, c);
  for (const AxoLinearBlock& b : blocks) p.linear += std::ceil(b.n * b.k / double(c.z));
  p.rows = 2 * norm_params(spec, c) + (spec.qk_norm ? 2.0 * double(spec.head_dim()) : 0.0);
  // Each linear's bias lies along its n_ outputs.
  if (spec.bias) {
    for (const AxoLinearBlock& b : blocks) p.other += b.n;
  } else if (spec.qkv_bias) {
    p.other = blocks[0].n;
  }
  return p;
}

AxoParams axo_end_params(const TransformerSpec& spec, const ParallelConfig& c, int64_t stage) {
  AxoParams p;
  const double columns = double(spec.hidden) / double(c.x);
  if (stage == 0) {
    p.other = axo_vocabulary_params(spec, c);
    if (spec.positions == PositionKind::learned) p.rows = double(spec.position_rows()) * columns;
  }
  if (stage == c.pipeline - 1) {
    p.rows += norm_params(spec, c);
    if (c.pipeline > 1 || !spec.tied_embeddings) p.other += axo_vocabulary_params(spec, c);
  }
  return p;
}

AxoParams axo_stage_params(const TransformerSpec& spec, const ParallelConfig& c, int64_t layers, int64_t stage) {
  AxoParams p = double(layers) * axo_layer_params(spec, c);
  p += axo_end_params(spec, c, stage);
  return p;
}

AxoNormWindows axo_norm_window_bytes(const TransformerSpec& spec, const ParallelConfig& c) {
  if (spec.precision == Precision::fp32) return {};
  const double window = 4 * double(spec.hidden) / double(c.x);  // fp32, a norm's h/x
  return {4 * window, 2 * window};
}

}  // namespace axo
