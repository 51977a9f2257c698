// Bytes each device holds for a configuration, on the stage that holds most.
//
// Model state, mixed-precision Adam (ZeRO, Rajbhandari et al.): 2-byte
// weights and gradients plus 12 bytes of fp32 master weights and moments per
// parameter (8 when training in fp32); every weight is sharded over X, Y and
// Z as AxoNN does, and offload moves the 12 (or 8) bytes to host memory.
// Activations per layer and microbatch follow Korthikanti et al. 2022
// (arXiv 2205.05198, Table 2), mapped onto the 4D shards: with T = b·s/(z·c)
// local tokens (c: the context ranks, each holding s/c tokens), hidden-space tensors are [T, h/x] (LayerNorm inputs and outputs,
// dropout masks: the "10·sbh"), column-space tensors [T, n/y] (Q, K, V,
// attention context, MLP hidden: the "24·sbh/t"), attention matrices
// (b/z)·(a/y)·(s/c)·s (the rank's queries against every key) at 5 bytes each
// with dropout, 2 without. Context parallelism adds the ring's two
// key/value receive blocks (2 · 2·T·(kv_heads/y)·d·e bytes) to the buffers. Selective
// recompute drops the attention matrices; full recompute keeps only each
// layer's input plus one layer's working set. Each stage holds its own layers
// (stage_partition.h): stage s holds min(m, p − s) microbatches in flight
// (1F1B), times 1 + (p−1−s)/(p·v) when interleaved (Korthikanti et al.'s
// factor on the first stage); the first stage also holds the embedding, the
// last the head and one microbatch's logits (fp16 + fp32, V'/y rows:
// vocab_parallel.h). The fullest stage sets the memory.
#pragma once

#include <cstdint>
#include <vector>

#include "model/breakdown.h"
#include "model/parallel_config.h"
#include "model/stage_partition.h"
#include "model/transformer_spec.h"
#include "model/vocab_parallel.h"

namespace axo {

// Bytes per device on the fullest stage.
MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& config);
// Same, for stages of `stage_layers` layers each (layers_by_stage(split)).
MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& config,
                                  const std::vector<int64_t>& stage_layers);
// Bytes per device on stage `stage` of `split`.
MemoryBreakdown stage_memory(const TransformerSpec& spec, const ParallelConfig& config, const PipelineSplit& split,
                             int64_t stage);

// Parameters held by a pipeline stage before sharding over x, y, z: its
// layers, the embedding on the first stage, the final norm and head on the
// last (the whole model when pipeline = 1).
int64_t stage_params(const TransformerSpec& spec, const ParallelConfig& config, const PipelineSplit& split,
                     int64_t stage);
int64_t first_stage_params(const TransformerSpec& spec, const ParallelConfig& config);
int64_t last_stage_params(const TransformerSpec& spec, const ParallelConfig& config);
// The most any stage holds.
int64_t fullest_stage_params(const TransformerSpec& spec, const ParallelConfig& config,
                             const std::vector<int64_t>& stage_layers);

}  // namespace axo
