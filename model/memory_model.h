// Bytes each device holds for a configuration, on the stage that holds most.
//
// Model state, mixed-precision Adam (ZeRO, Rajbhandari et al.): 2-byte
// weights and gradients plus 12 bytes of fp32 master weights and moments per
// parameter (8 when training in fp32); every weight is sharded over X, Y and
// Z as AxoNN does, and offload moves the 12 (or 8) bytes to host memory.
// Activations per layer and microbatch follow Korthikanti et al. 2022
// (arXiv 2205.05198, Table 2), mapped onto the 4D shards: with T = b·s/z local
// tokens, hidden-space tensors are [T, h/x] (LayerNorm inputs and outputs,
// dropout masks: the "10·sbh"), column-space tensors [T, n/y] (Q, K, V,
// attention context, MLP hidden: the "24·sbh/t"), attention matrices
// (b/z)·(a/y)·s² at 5 bytes each with dropout, 2 without. Selective
// recompute drops the attention matrices; full recompute keeps only each
// layer's input plus one layer's working set. The first stage holds
// min(m, p) microbatches in flight (1F1B), times (1 + (p−1)/(p·v)) when
// interleaved; the last stage holds one microbatch's logits (fp16 + fp32).
#pragma once

#include "model/breakdown.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"
#include "model/vocab_parallel.h"

namespace axo {

MemoryBreakdown memory_per_device(const TransformerSpec& spec, const ParallelConfig& config);

// Parameters held by the first and by the last pipeline stage (the whole
// model when pipeline = 1), before sharding over x, y, z.
int64_t first_stage_params(const TransformerSpec& spec, const ParallelConfig& config);
int64_t last_stage_params(const TransformerSpec& spec, const ParallelConfig& config);

}  // namespace axo
