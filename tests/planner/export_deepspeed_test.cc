// The DeepSpeed export: the ds_config JSON parses and carries the plan's
// values, offload becomes offload_optimizer, the Megatron-DeepSpeed arguments
// carry the grid, and the plans DeepSpeed cannot run say why.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/error.h"
#include "model/presets.h"
#include "planner/export.h"
#include "tests/input_error_of.h"
#include "tests/planner/export_fixtures.h"

namespace axo {
namespace {

// Selene's preset reduces the gradients after the backward, as DeepSpeed's PipelineEngine does.
MachineProfile selene() {
  MachineProfile machine = gpu_machine("selene", 8);
  machine.grad_reduce = GradReduce::after_backward;
  return machine;
}

// Megatron-DeepSpeed's one-dimensional tensor parallelism: x = z = 1; its backward collective
// overlaps with sequence parallelism only.
ParallelConfig grid(int64_t pipeline, int64_t data, int64_t y, int64_t microbatch) {
  ParallelConfig c = axo::grid(pipeline, data, 1, y, 1, microbatch);
  c.sequence_parallel = y > 1;
  return c;
}

nlohmann::json ds_config(const TransformerSpec& spec, const ParallelConfig& c) {
  return nlohmann::json::parse(export_deepspeed(spec, selene(), c, ExportContext{}));
}

// 1024 sequences = micro 2 × data 4 × 128 accumulation steps.
TEST(ExportDeepspeed, BatchPrecisionAndZeroStageFromThePlan) {
  ParallelConfig c = grid(2, 4, 8, 2);
  c.zero = 1;
  const nlohmann::json json = ds_config(gpt3_13b(), c);
  EXPECT_EQ(json["train_batch_size"], 1024);
  EXPECT_EQ(json["train_micro_batch_size_per_gpu"], 2);
  EXPECT_EQ(json["gradient_accumulation_steps"], 128);
  EXPECT_EQ(json["bf16"]["enabled"], true);
  EXPECT_EQ(json["fp16"]["enabled"], false);
  EXPECT_EQ(json["zero_optimization"]["stage"], 1);
  EXPECT_EQ(json["zero_optimization"]["overlap_comm"], false);  // reduced after the backward, as priced
  EXPECT_FALSE(json["zero_optimization"].contains("offload_optimizer"));
  EXPECT_EQ(json["gradient_clipping"], 1.0);
}

TEST(ExportDeepspeed, OffloadIsOffloadOptimizerOnTheHost) {
  TransformerSpec spec = gpt3_13b();
  spec.precision = Precision::fp16;
  ParallelConfig c = grid(1, 8, 8, 4);
  c.zero = 2;
  c.offload = true;
  const nlohmann::json json = ds_config(spec, c);
  EXPECT_EQ(json["zero_optimization"]["stage"], 2);
  EXPECT_EQ(json["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  EXPECT_EQ(json["zero_optimization"]["offload_optimizer"]["pin_memory"], true);
  EXPECT_EQ(json["fp16"]["enabled"], true);
  EXPECT_EQ(json["bf16"]["enabled"], false);
  EXPECT_EQ(json["gradient_accumulation_steps"], 1024 / (4 * 8));
  const std::string arguments = deepspeed_launch_arguments(spec, selene(), c, ExportContext{});
  EXPECT_NE(arguments.find("  --no-pipeline-parallel\n"), std::string::npos) << arguments;
  EXPECT_NE(arguments.find("  --zero-stage 2\n"), std::string::npos);
  EXPECT_NE(arguments.find("  --fp16\n"), std::string::npos);
  EXPECT_NE(arguments.find("  --cpu-optimizer\n"), std::string::npos);  // DeepSpeedCPUAdam, which offload needs
}

// ZeRO stage 1 or 2 without a pipeline overlaps the reduction with the backward (overlap_comm),
// as a stack that prices it so needs; stage 0 and the PipelineEngine reduce after the backward.
TEST(ExportDeepspeed, TheReductionOverlapsAsTheStackPricesIt) {
  MachineProfile overlapped = selene();
  overlapped.grad_reduce = GradReduce::overlapped;
  ParallelConfig c = grid(1, 8, 8, 1);
  c.zero = 1;
  const auto config = [&](const MachineProfile& m) {
    return nlohmann::json::parse(export_deepspeed(gpt3_13b(), m, c, ExportContext{}));
  };
  EXPECT_EQ(config(overlapped)["zero_optimization"]["overlap_comm"], true);
  EXPECT_EQ(config(selene())["zero_optimization"]["overlap_comm"], false);
  c.zero = 0;
  EXPECT_NE(deepspeed_limitation(gpt3_13b(), overlapped, c).find("ZeRO stage 0 reduces the gradients after the backward"),
            std::string::npos) << deepspeed_limitation(gpt3_13b(), overlapped, c);
  EXPECT_EQ(deepspeed_limitation(gpt3_13b(), selene(), c), "");
  c = grid(2, 4, 8, 1);
  c.zero = 1;
  EXPECT_NE(deepspeed_limitation(gpt3_13b(), overlapped, c).find("PipelineEngine reduces the gradients after"),
            std::string::npos);
  EXPECT_EQ(deepspeed_limitation(gpt3_13b(), overlapped, grid(2, 1, 8, 1)), "");  // nothing to reduce
  // The nearest plan is one it runs as the stack prices it (no pipeline with data ranks here).
  MachineProfile preset = load_machine("selene");
  preset.grad_reduce = GradReduce::overlapped;
  const CostModel model(gpt3_13b(), preset);
  SearchOptions options;
  options.gpus = 64;
  const std::optional<PlanRow> nearest = nearest_expressible(ExportFormat::deepspeed, model, options);
  ASSERT_TRUE(nearest);
  EXPECT_EQ(deepspeed_limitation(gpt3_13b(), preset, nearest->config), "") << fix_string(nearest->config);
}

// Under --deepspeed the tensor-parallel all-reduce is synchronous, the sequence-parallel
// reduce-scatter asynchronous: overlap goes with sequence_parallel, which needs
// CUDA_DEVICE_MAX_CONNECTIONS=1 (Megatron-DeepSpeed raises without it).
TEST(ExportDeepspeed, TheTensorParallelBackwardOverlapsWithSequenceParallelismOnly) {
  ParallelConfig c = grid(1, 4, 8, 1);
  EXPECT_EQ(deepspeed_limitation(gpt3_13b(), selene(), c), "");
  EXPECT_NE(deepspeed_launch_arguments(gpt3_13b(), selene(), c, ExportContext{})
                .find("export CUDA_DEVICE_MAX_CONNECTIONS=1\n"),
            std::string::npos);
  c.overlap = false;
  EXPECT_NE(deepspeed_limitation(gpt3_13b(), selene(), c).find("always overlaps the sequence-parallel reduce-scatter"),
            std::string::npos);
  c.sequence_parallel = false;
  EXPECT_EQ(deepspeed_limitation(gpt3_13b(), selene(), c), "");
  EXPECT_EQ(deepspeed_launch_arguments(gpt3_13b(), selene(), c, ExportContext{}).find("CUDA_DEVICE_MAX_CONNECTIONS"),
            std::string::npos);
  c.overlap = true;
  EXPECT_NE(deepspeed_limitation(gpt3_13b(), selene(), c).find("never overlaps the tensor-parallel all-reduce"),
            std::string::npos);
  EXPECT_EQ(deepspeed_limitation(gpt3_13b(), selene(), grid(1, 32, 1, 1)), "");  // y = 1: no such collective
}

TEST(ExportDeepspeed, ArgumentsCarryTheGrid) {
  ParallelConfig c = grid(2, 4, 8, 2);
  c.sequence_parallel = true;
  c.recompute = Recompute::full;
  const std::string arguments = deepspeed_launch_arguments(gpt3_13b(), selene(), c, ExportContext{});
  for (const char* expected : {"  --tensor-model-parallel-size 8\n", "  --pipeline-model-parallel-size 2\n",
                               "  --num-layers 40\n", "  --micro-batch-size 2\n",
                               "  --global-batch-size 1024\n", "  --sequence-parallel\n",
                               "  --recompute-granularity full\n", "  --bf16\n"}) {
    EXPECT_NE(arguments.find(expected), std::string::npos) << expected << arguments;
  }
  EXPECT_EQ(arguments.find("--no-pipeline-parallel"), std::string::npos);
  ExportContext context;
  context.deepspeed_config_path = "my runs/ds.json";
  EXPECT_NE(deepspeed_launch_arguments(gpt3_13b(), selene(), c, context)
                .find("  --deepspeed_config 'my runs/ds.json'\n"),
            std::string::npos);
}

// fp8 has no ds_config key (nor AxoNN fp8 GEMMs, nor torchtitan fp16 parameters): refused, where
// the export ran bf16 under the fp8 plan's faster prediction.
TEST(ExportDeepspeed, PrecisionsItDoesNotTrainInAreRefused) {
  TransformerSpec spec = gpt3_13b();
  spec.precision = Precision::fp8;
  for (ExportFormat format : {ExportFormat::deepspeed, ExportFormat::axonn}) {
    EXPECT_NE(export_model_problem(format, spec).find("does not train in fp8, which gpt3-13b is planned in"),
              std::string::npos) << to_string(format);
    EXPECT_NE(testing::input_error_of([&] { export_plan(format, spec, selene(), grid(1, 8, 8, 1), ExportContext{}); })
                  .find("does not train in fp8"),
              std::string::npos) << to_string(format);
  }
  EXPECT_EQ(export_model_problem(ExportFormat::megatron, spec), "");
  spec.precision = Precision::fp16;
  EXPECT_NE(export_model_problem(ExportFormat::torchtitan, spec).find("--precision bf16"), std::string::npos);
  EXPECT_EQ(export_model_problem(ExportFormat::deepspeed, spec), "");
}

TEST(ExportDeepspeed, InexpressiblePlansSayWhy) {
  const TransformerSpec spec = gpt3_13b();
  const MachineProfile machine = selene();
  ParallelConfig c = grid(2, 4, 8, 2);
  c.zero = 2;  // PipelineEngine takes ZeRO 0 or 1
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("pipeline=2 with zero=2"), std::string::npos);
  EXPECT_THROW(export_deepspeed(spec, machine, c, ExportContext{}), InputError);
  c = grid(1, 4, 4, 2);
  c.x = 2;
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("needs x=1 and z=1"), std::string::npos);
  c = grid(1, 4, 8, 2);
  c.context = 2;
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("DeepSpeed-Ulysses"), std::string::npos);
  c = grid(1, 8, 8, 1);
  c.offload = true;
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("zero=1"), std::string::npos);
  c = grid(3, 1, 8, 1);  // 40 layers over 3 stages: 14, 13, 13
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("type:transformer"), std::string::npos);
  c = grid(4, 2, 8, 1);
  c.interleave = 2;
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("interleave=2"), std::string::npos);
  c = grid(4, 2, 8, 1);
  c.recompute = Recompute::full, c.recompute_layers = 2;  // GPTModelPipe would recompute none
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("recompute_layers=2 would recompute none"), std::string::npos);
  c.recompute_layers = 0;
  EXPECT_EQ(deepspeed_limitation(spec, machine, c), "");
  c = grid(1, 8, 8, 1);
  c.recompute = Recompute::full, c.recompute_layers = 2;  // without a pipeline, Megatron's own block method
  EXPECT_EQ(deepspeed_limitation(spec, machine, c), "");
  EXPECT_EQ(deepspeed_limitation(spec, machine, grid(4, 2, 8, 1)), "");
  const FixedFields fixed = expressible_fields(ExportFormat::deepspeed, spec, FixedFields{}, false);
  EXPECT_EQ(fixed.values.x, 1);
  EXPECT_EQ(fixed.values.z, 1);
  EXPECT_EQ(fixed.values.context, 1);
  EXPECT_EQ(fixed.values.interleave, 1);
  EXPECT_FALSE(fixed.holds("pipeline"));
}

}  // namespace
}  // namespace axo
