// Device memory, predicted against measured: the memory model set to what
// the run trained, the rows and their errors, and the table.
#include "report/memory_comparison.h"

#include <gtest/gtest.h>

#include "model/axo_parameters.h"
#include "model/memory_model.h"
#include "tests/report/report_test_files.h"

namespace axo {
namespace {

TEST(MemoryComparison, PredictsForWhatTheRunTrained) {
  Plan plan = testing::one_gpu_plan(testing::breakdown_of(1, 0, 0, 0, 0, 0, 0));
  ASSERT_NE(plan.model.seq_len, 16);
  MeasuredRun run;
  run.seq = 16, run.batch = 4, run.microbatch = 2;
  run.memory = MeasuredMemory{};
  run.memory->offload = true;
  const MemoryBreakdown predicted = predicted_memory(plan, run);

  TransformerSpec spec = plan.model;
  spec.precision = Precision::fp32, spec.seq_len = 16, spec.global_batch = 4;
  ParallelConfig config = plan.config;
  config.microbatch = 2, config.offload = true;
  // The run is axo's executor's: its activation layout, not Megatron-LM's (ActivationLayout).
  const MemoryBreakdown expected = memory_per_device(spec, config, executor_memory_stack());
  EXPECT_DOUBLE_EQ(predicted.activations, expected.activations);
  EXPECT_GT(predicted.activations, memory_per_device(spec, config).activations);
  EXPECT_DOUBLE_EQ(predicted.total(), expected.total());
  // fp32 weights, 4 bytes per parameter; the moments offloaded.
  EXPECT_DOUBLE_EQ(predicted.weights, 4.0 * double(first_stage_params(spec, config)));
  EXPECT_EQ(predicted.optimizer, 0);

  run.memory->offload = false;
  EXPECT_DOUBLE_EQ(predicted_memory(plan, run).optimizer, 2 * predicted.weights);  // m and v, fp32
  // A bf16 run (run.json's precision): 2-byte weights (and the norms' fp32 windows), 12 bytes of
  // masters and moments.
  run.precision = Precision::bf16;
  const MemoryBreakdown bf16 = predicted_memory(plan, run);
  spec.precision = Precision::bf16;
  const double windows = axo_norm_window_bytes(spec, config).weights;
  EXPECT_GT(windows, 0);
  EXPECT_DOUBLE_EQ(bf16.weights, predicted.weights / 2 + windows);
  EXPECT_DOUBLE_EQ(bf16.optimizer, 6 * (bf16.weights - windows));
}

TEST(MemoryComparison, RowsPerUseThenTheTotal) {
  MemoryBreakdown predicted;
  predicted.weights = 1 << 20, predicted.gradients = 1 << 20, predicted.activations = 2 << 20;
  MeasuredMemory measured;
  measured.at_peak = {1 << 20, 1 << 20, 0, 3 << 20, 1 << 19};
  measured.device_peak = (11 << 20) / 2;
  const std::vector<MemoryRow> rows = compare_memory(predicted, measured);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[3].use, "activations");
  EXPECT_DOUBLE_EQ(*rows[3].error_pct, 50.0);
  EXPECT_FALSE(rows[4].error_pct);  // nothing predicted for the buffers
  EXPECT_EQ(rows[5].use, "total");
  EXPECT_DOUBLE_EQ(*rows[5].error_pct, 37.5);
  const std::string table = memory_comparison_table(rows);
  EXPECT_NE(table.find("activations           2.000          3.000    +50.0\n"), std::string::npos) << table;
  EXPECT_NE(table.find("comm_buffers          0.000          0.500      n/a\n"), std::string::npos) << table;
}

}  // namespace
}  // namespace axo
