// The models, machines and grids the export tests share (their golden files
// were written from these exact values).
#pragma once

#include <cstdint>
#include <string>

#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

// GPT-3 13B as in Narayanan et al. (SC'21) Table 1 / Brown et al. 2020.
inline TransformerSpec gpt3_13b() {
  TransformerSpec s;
  s.name = "gpt3-13b";
  s.layers = 40, s.hidden = 5120, s.heads = 40, s.kv_heads = 40, s.ffn_hidden = 20480;
  s.seq_len = 2048, s.vocab = 51200, s.global_batch = 1024, s.precision = Precision::bf16;
  return s;
}

inline MachineProfile gpu_machine(const std::string& name, int64_t gpus_per_node) {
  MachineProfile m;
  m.name = name;
  m.gpus_per_node = gpus_per_node;
  return m;
}

inline ParallelConfig grid(int64_t pipeline, int64_t data, int64_t x, int64_t y, int64_t z, int64_t microbatch) {
  ParallelConfig c;
  c.pipeline = pipeline, c.data = data, c.x = x, c.y = y, c.z = z, c.microbatch = microbatch;
  return c;
}

}  // namespace axo
