// torchtitan's per-op checkpointing policy (model/per_op_checkpoint.h): every
// other matmul in forward order is saved, starting with wq.
#include "model/per_op_checkpoint.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(PerOpCheckpoint, SavesWqWvW1AndW2OfASwigluBlock) {
  const TransformerSpec spec = load_model("llama3-8b");
  const auto matmuls = per_op_matmuls(spec);
  ASSERT_EQ(matmuls.size(), 7u);  // wq wk wv wo w1 w3 w2
  const bool saved[] = {true, false, true, false, true, false, true};
  const int linear[] = {0, 0, 0, 1, 2, 2, 3};
  for (size_t i = 0; i < matmuls.size(); ++i) {
    EXPECT_EQ(matmuls[i].saved, saved[i]) << i;
    EXPECT_EQ(matmuls[i].linear, linear[i]) << i;
  }
  EXPECT_DOUBLE_EQ(matmuls[1].width, double(spec.kv_heads * spec.head_dim()));
  EXPECT_TRUE(matmuls[3].hidden_space);
  EXPECT_TRUE(matmuls[6].hidden_space);
}

TEST(PerOpCheckpoint, GeluBlockSavesWqWvAndW1) {
  TransformerSpec spec = load_model("gpt3-13b");
  const auto matmuls = per_op_matmuls(spec);
  ASSERT_EQ(matmuls.size(), 6u);  // wq wk wv wo w1 w2
  EXPECT_TRUE(matmuls[4].saved);
  EXPECT_FALSE(matmuls[5].saved);  // w2 is recomputed
  EXPECT_EQ(matmuls[5].linear, 3);
}

}  // namespace
}  // namespace axo
