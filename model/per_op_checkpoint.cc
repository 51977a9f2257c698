// torchtitan's per-op checkpointing policy (see per_op_checkpoint.h).
#include "model/per_op_checkpoint.h"

namespace axo {

std::vector<CheckpointedMatmul> per_op_matmuls(const TransformerSpec& spec) {
  const double d = double(spec.head_dim());
  std::vector<CheckpointedMatmul> matmuls = {{0, double(spec.heads) * d, false},
                                             {0, double(spec.kv_heads) * d, false},
                                             {0, double(spec.kv_heads) * d, false},
                                             {1, double(spec.hidden), true},
                                             {2, double(spec.ffn_hidden), false}};
  if (spec.mlp == MlpKind::swiglu) matmuls.push_back({2, double(spec.ffn_hidden), false});
  matmuls.push_back({3, double(spec.hidden), true});
  for (size_t i = 0; i < matmuls.size(); i += 2) matmuls[i].saved = true;
  return matmuls;
}

}  // namespace axo
