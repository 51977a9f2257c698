// axo's executor's activation memory (see axo_activations.h).
#include "model/axo_activations.h"

#include "model/cost_shapes.h"
#include "model/vocab_parallel.h"

namespace axo {

namespace {

// One layer's views as carve_layer takes them, with the probabilities' `probabilities` elements.
double layer_elements(const TransformerSpec& spec, const ParallelConfig& c, double rows, double stream_rows,
                      double probabilities) {
  const double hidden = double(spec.hidden) / double(c.x);
  const double columns =
      double(spec.qkv_width() + spec.hidden + spec.mlp_up_width() + spec.ffn_hidden) / double(c.y);
  const double gathered = c.sequence_parallel ? 2 * rows * hidden : 0;  // ln1_rows, ln2_rows
  return 6 * stream_rows * hidden + 4 * stream_rows + rows * columns + probabilities + gathered;
}

}  // namespace

AxoActivationShapes axo_activation_shapes(const TransformerSpec& spec, const ParallelConfig& c) {
  const double rows = tokens_per_rank(spec, c);  // m
  const double stream_rows = c.sequence_parallel ? rows / double(c.y) : rows;
  const double hidden = double(spec.hidden) / double(c.x);
  const double local_length = double(spec.seq_len) / double(c.context);
  const double sequences_by_heads = double(c.microbatch / c.z) * double(spec.heads / c.y);
  const double ring_lse = sequences_by_heads * local_length;
  const double scores = c.context > 1 ? 0 : sequences_by_heads * local_length * local_length;
  const bool keeps_probabilities = c.context > 1 || c.recompute != Recompute::selective;
  const double logits = rows * double(padded_vocab(spec, c.y)) / double(c.y);
  AxoActivationShapes s;
  s.stream = stream_rows * hidden;
  s.gathered = rows * hidden;
  const double final_norm_rows = c.sequence_parallel ? s.gathered : 0;
  s.layer = layer_elements(spec, c, rows, stream_rows,
                           c.context > 1 ? ring_lse : keeps_probabilities ? scores : 0);
  s.layer_grads = layer_elements(spec, c, rows, stream_rows, 0);
  s.probabilities = scores;
  s.head = s.stream + 2 * stream_rows + final_norm_rows + 2 * logits;
  s.head_grads = s.stream + final_norm_rows + logits;
  return s;
}

AxoBackwardBytes axo_backward_bytes(const TransformerSpec& spec, const ParallelConfig& c) {
  constexpr double kFloat = 4;
  const AxoActivationShapes s = axo_activation_shapes(spec, c);
  const bool two_byte = spec.precision != Precision::fp32, rolls = two_byte || c.recompute == Recompute::full;
  double every = 2 * s.stream + s.layer_grads + s.probabilities;
  if (c.recompute == Recompute::selective) every += s.probabilities;  // one layer's, rebuilt
  if (rolls) every += s.stream + s.layer;                              // the rolling views
  AxoBackwardBytes b;
  b.every_stage = kFloat * every;
  b.first_stage = c.sequence_parallel && c.y > 1 ? kFloat * s.gathered : 0;  // the embedding's gathered rows
  b.last_stage = kFloat * (s.head_grads + (two_byte ? s.head : 0));  // and the head's rolling view
  return b;
}

}  // namespace axo
