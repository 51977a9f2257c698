// Per-device memory of a configuration (see memory_model.h for the sources).
#include "model/memory_model.h"

#include <algorithm>

namespace axo {

namespace {

int64_t embedding_params(const TransformerSpec& spec) {
  return spec.vocab * spec.hidden +
         (spec.positions == PositionKind::learned ? spec.seq_len * spec.hidden : 0);
}

int64_t head_params(const TransformerSpec& spec, const ParallelConfig& config) {
  const int64_t final_norm = spec.norm == NormKind::layernorm ? 2 * spec.hidden : spec.hidden;
  // A tied head shares the embedding on a single stage; across stages the last
  // stage keeps its own copy (Megatron-LM), synchronised by an all-reduce.
  const bool own_head = !spec.tied_embeddings || config.pipeline > 1;
  return final_norm + (own_head ? spec.vocab * spec.hidden : 0);
}

// Activation bytes of one layer for one microbatch on one rank.
double layer_activation_bytes(const TransformerSpec& spec, const ParallelConfig& c,
                              Recompute recompute) {
  const double e = bytes_per_element(spec.precision);
  const double tokens = double(c.microbatch) * double(spec.seq_len) / double(c.z);
  const double token_split = c.sequence_parallel ? double(c.y) : 1.0;
  const double hidden_elems = tokens * double(spec.hidden) / double(c.x) / token_split;
  if (recompute == Recompute::full) return e * hidden_elems;  // the layer's input
  // LayerNorm inputs, QKV input, MLP input; two dropout masks at 1 byte.
  const double hidden_space = 4 * e * hidden_elems + (spec.dropout ? 2 * hidden_elems : 0);
  // Q, K, V, attention context, MLP up output and activation output.
  const double column_space =
      e * tokens / double(c.y) *
      double(spec.qkv_width() + spec.hidden + spec.mlp_up_width() + spec.ffn_hidden);
  const double attention_elems = double(c.microbatch / c.z) * double(spec.heads / c.y) *
                                 double(spec.seq_len) * double(spec.seq_len);
  const double attention =
      recompute == Recompute::selective ? 0 : attention_elems * (spec.dropout ? 2 * e + 1 : e);
  return hidden_space + column_space + attention;
}

}  // namespace

int64_t first_stage_params(const TransformerSpec& spec, const ParallelConfig& config) {
  const int64_t layers = spec.layers / config.pipeline;
  const int64_t params = layers * spec.params_per_layer() + embedding_params(spec);
  return config.pipeline == 1 ? params + head_params(spec, config) : params;
}

int64_t last_stage_params(const TransformerSpec& spec, const ParallelConfig& config) {
  if (config.pipeline == 1) return first_stage_params(spec, config);
  return spec.layers / config.pipeline * spec.params_per_layer() + head_params(spec, config);
}

MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& c) {
  const double e = bytes_per_element(spec.precision);
  const double shards = double(c.x * c.y * c.z);
  const double layers_per_stage = double(spec.layers / c.pipeline);
  const int64_t microbatches = spec.global_batch / (c.data * c.microbatch);
  const double tokens = double(c.microbatch) * double(spec.seq_len) / double(c.z);

  // Activations: microbatches in flight on the first stage (1F1B).
  double in_flight = double(std::min<int64_t>(microbatches, c.pipeline));
  if (c.interleave > 1) {
    in_flight *= 1.0 + double(c.pipeline - 1) / double(c.pipeline * c.interleave);
  }
  double first_activations = in_flight * layers_per_stage * layer_activation_bytes(spec, c, c.recompute);
  if (c.recompute == Recompute::full) {
    first_activations += layer_activation_bytes(spec, c, Recompute::none);  // working layer
  }
  // The last stage holds one microbatch in flight per stage of the pipeline
  // behind it (none) and the logits: fp16 and fp32 copies.
  const double logits = tokens * double(padded_vocab(spec, c.y)) / double(c.y) * (e + 4);
  double last_activations =
      layers_per_stage * layer_activation_bytes(spec, c, c.recompute) + logits;
  if (c.recompute == Recompute::full) {
    last_activations += layer_activation_bytes(spec, c, Recompute::none);
  }
  if (c.pipeline == 1) first_activations += logits;

  // Gathered weights of the largest linear layer (double-buffered when prefetched).
  const double largest_block =
      double(std::max({spec.qkv_width() * spec.hidden, spec.mlp_up_width() * spec.hidden,
                       spec.ffn_hidden * spec.hidden})) /
      double(c.x * c.y);
  double buffers = c.z > 1 ? largest_block * e * (c.overlap ? 2 : 1) : 0;
  if (c.pipeline > 1) {
    buffers += 2 * e * tokens * double(spec.hidden) / double(c.x);  // p2p send and receive
  }

  const double optimizer_bytes_per_param =
      c.offload ? 0 : (spec.precision == Precision::fp32 ? 8 : 12);
  auto stage_memory = [&](int64_t params, double activations) {
    MemoryBreakdown m;
    const double local = double(params) / shards;
    m.weights = local * e;
    m.gradients = local * e;
    m.optimizer = local * optimizer_bytes_per_param;
    m.activations = activations;
    m.comm_buffers = buffers;
    return m;
  };
  const MemoryBreakdown first = stage_memory(first_stage_params(spec, c), first_activations);
  const MemoryBreakdown last = stage_memory(last_stage_params(spec, c), last_activations);
  return first.total() >= last.total() ? first : last;
}

}  // namespace axo
