// Explanation items and their recorder (model/cost_item.h).
#include "model/cost_item.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

TEST(CostItem, NamesPrintAsTheExplanationShowsThem) {
  EXPECT_STREQ(to_string(CostScope::first_stage), "first stage");
  EXPECT_STREQ(to_string(CostScope::last_stage), "last stage");
  EXPECT_STREQ(to_string(CostPhase::forward_backward), "forward+backward");
  EXPECT_STREQ(to_string(CostPhase::recompute), "recompute");
  EXPECT_STREQ(to_string(CostKind::p2p), "p2p");
  EXPECT_STREQ(group_name(GridDim::data), "data");
  EXPECT_STREQ(group_name(GridDim::pipeline), "pipeline");
  EXPECT_STREQ(group_name(GridDim::z), "z");
}

TEST(CostRecorder, WithoutAListItOnlyPassesTheNumberThrough) {
  const CostRecorder silent;
  EXPECT_FALSE(silent.recording());
  EXPECT_EQ(silent.gemm(CostScope::layer, CostPhase::forward, "qkv", 8, 16, 32, 0.25), 0.25);
  EXPECT_EQ(silent.memory(CostScope::step, CostPhase::step, "adam", 100, 0.5), 0.5);
}

TEST(CostRecorder, CountsRunsPerIterationByScope) {
  std::vector<CostItem> items;
  const CostRecorder record(&items, /*layer_runs=*/12 * 4, /*microbatches=*/4);
  EXPECT_EQ(record.gemm(CostScope::layer, CostPhase::forward, "qkv", 2048, 384, 128, 2e-6), 2e-6);
  record.memory(CostScope::last_stage, CostPhase::forward, "cross-entropy", 4e6, 1e-3);
  record.memory(CostScope::step, CostPhase::step, "Adam on the device", 8e6, 2e-3);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].name, "qkv [2048x384x128]");
  EXPECT_EQ(items[0].kind, CostKind::gemm);
  EXPECT_DOUBLE_EQ(items[0].flops, 2.0 * 2048 * 384 * 128);
  EXPECT_DOUBLE_EQ(items[0].bandwidth_GBps, 2.0 * 2048 * 384 * 128 / 2e-6 / 1e12);  // TFLOP/s
  EXPECT_EQ(items[0].per_iteration, 48);
  EXPECT_EQ(items[1].per_iteration, 4);
  EXPECT_EQ(items[1].kind, CostKind::memory);
  EXPECT_DOUBLE_EQ(items[1].bandwidth_GBps, 4e6 / 1e-3 / 1e9);
  EXPECT_EQ(items[2].per_iteration, 1);
  EXPECT_EQ(items[2].exposed, items[2].seconds);
  // Two GEMMs of one shape in one item: twice the flops at the rate they ran together.
  record.gemm(CostScope::layer, CostPhase::backward, "scores dQ dK", 4096, 128, 2048, 4e-6, 2);
  EXPECT_DOUBLE_EQ(items[3].flops, 2 * 2.0 * 4096 * 128 * 2048);
  EXPECT_EQ(items[3].name, "scores dQ dK [4096x128x2048]");
}

}  // namespace
}  // namespace axo
