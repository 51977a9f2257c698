// Exports against golden files (tests/data/export/), byte for byte, and the
// plans a framework cannot express.
//
// The golden files were checked by hand against the frameworks' sources
// named in planner/export_*.cc. To see a changed export, run with
// AXO_UPDATE_GOLDEN=1 (rewrites the golden files) and review `git diff`.
#include "planner/export.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "model/error.h"
#include "model/presets.h"
#include "tests/input_error_of.h"
#include "tests/planner/export_fixtures.h"

namespace axo {
namespace {

const std::string kGoldenDir = std::string(AXO_TEST_DATA) + "/export/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// Compares `actual` with the golden file `name`; on a mismatch the message
// gives the first differing line of each and writes `actual` beside the build
// for `diff -u`.
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = kGoldenDir + name;
  if (std::getenv("AXO_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  const std::string expected = read_text(path);
  if (expected == actual) return;
  const std::string actual_path = ::testing::TempDir() + name + ".actual";
  std::ofstream(actual_path, std::ios::binary) << actual;
  const std::vector<std::string> want = lines_of(expected), got = lines_of(actual);
  size_t line = 0;
  while (line < want.size() && line < got.size() && want[line] == got[line]) ++line;
  ADD_FAILURE() << name << " differs from its golden file at line " << line + 1 << ":\n"
                << "  expected: " << (line < want.size() ? want[line] : "<end of file>") << "\n"
                << "  actual:   " << (line < got.size() ? got[line] : "<end of file>") << "\n"
                << "Whole output: diff -u " << path << " " << actual_path;
}

// Llama 3 8B's shape (grouped-query attention, SwiGLU, RMSNorm, RoPE of base 500000, no bias, untied).
TransformerSpec llama3_8b() {
  TransformerSpec s;
  s.name = "llama3-8b";
  s.layers = 32, s.hidden = 4096, s.heads = 32, s.kv_heads = 8, s.ffn_hidden = 14336;
  s.mlp = MlpKind::swiglu, s.norm = NormKind::rmsnorm, s.positions = PositionKind::rope, s.rope_theta = 500000;
  s.bias = false, s.tied_embeddings = false;
  s.seq_len = 8192, s.vocab = 128256, s.global_batch = 256, s.precision = Precision::bf16;
  return s;
}

ExportContext context() {
  ExportContext context;
  context.note = "Configuration 1 of the ranked table: predicted 1.2345 s per iteration.";
  return context;
}

TEST(ExportMegatron, GptWithFullRecompute) {
  ParallelConfig c = grid(2, 4, 1, 8, 1, 2);
  c.recompute = Recompute::full;
  expect_golden("megatron_gpt3_13b.sh",
                export_megatron(gpt3_13b(), gpu_machine("selene", 8), c, context()));
}

// llama3-8b's 32 layers over 4 stages are 9,8,8,7 (its LM head weighs as much as 1.8
// layers): the first and last counts. Interleaved, axo's chunks (5+4,4+4,4+4,4+3) are
// unequal though 32 divides into 8: Megatron-Core's layout, chunk k on rank k mod 4.
TEST(ExportMegatron, LlamaUnequalStagesSequenceParallelPipelineBeforeData) {
  ParallelConfig c = grid(4, 2, 1, 2, 1, 1);
  c.recompute = Recompute::selective;
  c.sequence_parallel = true;
  c.order = parse_order("xyzpd", "test");  // pipeline inside a node: --use-tp-pp-dp-mapping
  const std::string text = export_megatron(llama3_8b(), gpu_machine("dgx-h100", 8), c, context());
  expect_golden("megatron_llama3_8b.sh", text);
  EXPECT_NE(text.find("  --decoder-first-pipeline-num-layers 9\n  --decoder-last-pipeline-num-layers 7\n"),
            std::string::npos) << text;
  c.interleave = 2;
  ASSERT_EQ(priced_split(llama3_8b(), c).text(), "5+4,4+4,4+4,4+3");
  EXPECT_EQ(megatron_limitation(llama3_8b(), gpu_machine("dgx-h100", 8), c), "");
  const std::string layout = export_megatron(llama3_8b(), gpu_machine("dgx-h100", 8), c, context());
  EXPECT_NE(layout.find("  --pipeline-model-parallel-layout \"Et*5|t*4|t*4|t*4|t*4|t*4|t*4|t*3L\"\n"),
            std::string::npos) << layout;
  for (const char* other : {"--num-layers-per-virtual-pipeline-stage", "--decoder-first", "--decoder-last"}) {
    EXPECT_EQ(layout.find(other), std::string::npos) << other;  // Megatron takes one of them
  }
}

TEST(ExportMegatron, LlamaContextParallel) {
  ParallelConfig c = grid(1, 4, 1, 1, 1, 1);
  c.context = 2;  // as NVIDIA's Llama 3.1 8B recipe on 8 H100 (CP=2, DP=4)
  const std::string text = export_megatron(llama3_8b(), gpu_machine("dgx-h100", 8), c, context());
  expect_golden("megatron_llama3_8b_cp.sh", text);
  EXPECT_NE(text.find("  --context-parallel-size 2\n"), std::string::npos);
  c.data = 8;
  c.order = parse_order("dxyzcp", "test");  // data inside context, across nodes: not Megatron's order
  EXPECT_NE(megatron_limitation(llama3_8b(), gpu_machine("dgx-h100", 8), c).find("rank order dxyzcp"),
            std::string::npos);
}

TEST(ExportMegatron, InexpressiblePlansSayWhy) {
  const TransformerSpec spec = gpt3_13b();
  const MachineProfile machine = gpu_machine("selene", 8);
  ParallelConfig c = grid(1, 2, 2, 2, 2, 2);
  EXPECT_NE(megatron_limitation(spec, machine, c).find("needs x=1 and z=1"), std::string::npos);
  EXPECT_THROW(export_megatron(spec, machine, c, context()), InputError);
  c = grid(1, 8, 1, 8, 1, 1);
  c.offload = true;
  EXPECT_NE(megatron_limitation(spec, machine, c).find("distributed optimizer"), std::string::npos);
  c.offload = false;
  c.overlap = false;
  EXPECT_NE(megatron_limitation(spec, machine, c).find("overlap=off"), std::string::npos);
  c.overlap = true;
  c.order = parse_order("dxyzp", "test");  // data innermost: Megatron puts tensor innermost
  EXPECT_NE(megatron_limitation(spec, machine, c).find("rank order cdxyzp"), std::string::npos);
  c.order = parse_order("xyzdp", "test");
  EXPECT_EQ(megatron_limitation(spec, machine, c), "");
}

// zero=1 is the distributed optimizer with both overlaps (offload on top of
// it); 40 layers over 3 stages are 14, 13, 13 (the embedding is a lookup,
// the head a GEMM): the first and last counts.
TEST(ExportMegatron, DistributedOptimizerAndUnequalStages) {
  ParallelConfig c = grid(3, 4, 1, 8, 1, 2);
  c.zero = 1;
  c.offload = true;
  const std::string text = export_megatron(gpt3_13b(), gpu_machine("selene", 8), c, context());
  expect_golden("megatron_gpt3_13b_zero1.sh", text);
  for (const char* expected : {"--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather",
                               "--optimizer-cpu-offload", "--decoder-first-pipeline-num-layers 14",
                               "--decoder-last-pipeline-num-layers 13"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  }
}

// The machine's stack as priced: the reduction after the backward (selene's, Megatron-LM of
// 2021) writes no overlap flags; a bf16 reduction is --grad-reduce-in-bf16 (Megatron reduces bf16
// gradients in fp32 by default, reduce_dtype fp32); fp8 weights kept in fp8 (primary) are
// --fp8-param-gather, which needs the distributed optimizer.
TEST(ExportMegatron, TheMachinesStackAsPriced) {
  ParallelConfig c = grid(1, 8, 1, 8, 1, 1);
  c.zero = 1;
  MachineProfile machine = gpu_machine("selene", 8);
  machine.grad_reduce = GradReduce::after_backward;
  const std::string after = export_megatron(gpt3_13b(), machine, c, context());
  EXPECT_EQ(after.find("--overlap-grad-reduce"), std::string::npos) << after;
  EXPECT_EQ(after.find("--overlap-param-gather"), std::string::npos) << after;
  EXPECT_NE(after.find("reduced after the backward, as priced"), std::string::npos) << after;
  EXPECT_NE(after.find("--use-distributed-optimizer"), std::string::npos) << after;
  EXPECT_NE(after.find("--grad-reduce-in-bf16"), std::string::npos) << after;
  machine.reduce_dtype = ReduceDtype::fp32;
  EXPECT_EQ(export_megatron(gpt3_13b(), machine, c, context()).find("--grad-reduce-in-bf16"), std::string::npos);
  TransformerSpec fp8 = llama3_8b();
  fp8.precision = Precision::fp8;
  machine.fp8_weights = Fp8Weights::primary;
  EXPECT_NE(export_megatron(fp8, machine, c, context()).find("  --fp8-param-gather\n"), std::string::npos);
  machine.fp8_weights = Fp8Weights::cached;
  EXPECT_EQ(export_megatron(fp8, machine, c, context()).find("--fp8-param-gather"), std::string::npos);
  machine.fp8_weights = Fp8Weights::primary;
  c.zero = 0;
  EXPECT_NE(megatron_limitation(fp8, machine, c).find("need its distributed optimizer"), std::string::npos);
  // One data rank: the distributed optimizer shards nothing and prices as zero=0 (which the search
  // gives such a grid), so fp8 weights and an offloaded optimizer run it. The gradient buffer's
  // dtype is the stack's whatever the data-parallel size.
  c = grid(1, 1, 1, 8, 1, 1);
  const std::string one = export_megatron(fp8, machine, c, context());
  for (const char* expected : {"  --fp8-param-gather\n", "  --use-distributed-optimizer\n"}) {
    EXPECT_NE(one.find(expected), std::string::npos) << expected << one;
  }
  EXPECT_EQ(one.find("--overlap-param-gather"), std::string::npos) << one;
  machine.fp8_weights = Fp8Weights::cached, machine.reduce_dtype = ReduceDtype::compute;
  c.offload = true;
  const std::string offload = export_megatron(gpt3_13b(), machine, c, context());
  // Megatron asserts the precision-aware optimizer beside the CPU offload (arguments.py).
  for (const char* expected : {"  --grad-reduce-in-bf16\n", "  --use-distributed-optimizer\n", "  --optimizer-cpu-offload\n",
                               "  --use-precision-aware-optimizer\n"}) {
    EXPECT_NE(offload.find(expected), std::string::npos) << expected << offload;
  }
  TransformerSpec fp16 = gpt3_13b();
  fp16.precision = Precision::fp16;
  c.offload = false;
  EXPECT_EQ(export_megatron(fp16, machine, c, context()).find("--grad-reduce-in-bf16"), std::string::npos);
  machine.reduce_dtype = ReduceDtype::fp32;
  EXPECT_NE(export_megatron(fp16, machine, c, context()).find("  --accumulate-allreduce-grads-in-fp32\n"),
            std::string::npos);
  // Gradients accumulated outside the weight-gradient GEMMs, as priced.
  EXPECT_EQ(export_megatron(fp16, machine, c, context()).find("--no-gradient-accumulation-fusion"), std::string::npos);
  machine.grad_accumulation = GradAccumulation::separate;
  EXPECT_NE(export_megatron(fp16, machine, c, context()).find("  --no-gradient-accumulation-fusion\n"),
            std::string::npos);
}

// zero=2 has no Megatron counterpart. Splits that neither equal chunks nor first and last
// counts describe (interleaved and unequal, or unequal inner stages) are its layout.
TEST(ExportMegatron, ZeroTwoIsRefusedAndOtherSplitsAreALayout) {
  const MachineProfile machine = gpu_machine("selene", 8);
  ParallelConfig c = grid(1, 8, 1, 8, 1, 1);
  c.zero = 2;
  EXPECT_NE(megatron_limitation(gpt3_13b(), machine, c).find("zero=2 has no counterpart"), std::string::npos);
  c = grid(3, 1, 1, 8, 1, 1);
  c.interleave = 2;  // 40 layers in 6 chunks: not equal
  const PipelineSplit& interleaved = priced_split(gpt3_13b(), c);
  ASSERT_FALSE(equal_chunks(interleaved));
  std::string expected = "E";
  for (size_t k = 0; k < interleaved.chunks().size(); ++k) {
    expected += (k > 0 ? "|t*" : "t*") + std::to_string(interleaved.chunks()[k].count());
  }
  EXPECT_NE(export_megatron(gpt3_13b(), machine, c, context())
                .find("  --pipeline-model-parallel-layout \"" + expected + "L\"\n"),
            std::string::npos) << interleaved.text();
  c = grid(6, 1, 1, 8, 1, 1);  // 40 layers over 6 stages
  const PipelineSplit& six = priced_split(gpt3_13b(), c);
  bool inner_equal = true;
  for (int64_t s = 2; s + 1 < 6; ++s) inner_equal &= six.stage_layers(s) == six.stage_layers(1);
  const std::string text = export_megatron(gpt3_13b(), machine, c, context());
  EXPECT_EQ(text.find("--pipeline-model-parallel-layout") != std::string::npos, !inner_equal) << six.text();
  EXPECT_EQ(text.find("--decoder-first") != std::string::npos, inner_equal) << six.text();
  c = grid(4, 1, 1, 8, 1, 1);  // 40 layers over 4 stages: equal, no first/last counts
  EXPECT_EQ(export_megatron(gpt3_13b(), machine, c, context()).find("--decoder-first"), std::string::npos);
  EXPECT_EQ(export_megatron(gpt3_13b(), machine, c, context()).find("--pipeline-model-parallel-layout"),
            std::string::npos);
}

TEST(ExportOthers, ZeroHasNoTorchtitanOrAxonnCounterpart) {
  const MachineProfile machine = gpu_machine("selene", 8);
  ParallelConfig c = grid(1, 8, 1, 1, 1, 1);
  c.zero = 1;
  EXPECT_NE(torchtitan_limitation(gpt3_13b(), machine, c).find("zero=1 has no counterpart"), std::string::npos);
  c.order = parse_order("xyzpd", "test");
  EXPECT_NE(axonn_limitation(gpt3_13b(), machine, c).find("zero=1 has no counterpart"), std::string::npos);
}

// torchtitan v0.2.2 (models/llama3/infra/parallelize.py): replicas without FSDP are DDP, which it
// runs only over every rank; the sequence divides by tp × 2 × cp.
TEST(ExportTorchtitan, DdpOnlyOverEveryRankAndTheSequenceDividesByTwiceTpTimesCp) {
  const MachineProfile machine = gpu_machine("dgx-h100", 8);
  ParallelConfig c = grid(1, 16, 1, 1, 1, 1);
  EXPECT_EQ(torchtitan_limitation(llama3_8b(), machine, c), "");  // DDP over all 16
  c = grid(2, 2, 1, 4, 1, 1);
  c.sequence_parallel = true;
  c.order = parse_order("xyczdp", "test");
  EXPECT_EQ(torchtitan_limitation(llama3_8b(), machine, c),
            "without FSDP (z=1, context=1) its data_parallel_replicate_degree replicas run DDP, which it applies "
            "only when they are every rank (\"DDP has not supported > 1D parallelism\"), and this plan's data=2 "
            "replicas have 8 ranks each (y × pipeline); with z>1 they are HSDP");
  c.z = 2, c.microbatch = 2;
  EXPECT_EQ(torchtitan_limitation(llama3_8b(), machine, c), "");
  TransformerSpec spec = llama3_8b();
  spec.seq_len = 8188;  // divisible by 4 (y), not by 4 × 2 × 1
  EXPECT_EQ(torchtitan_limitation(spec, machine, c),
            "it needs seq_len divisible by tensor_parallel_degree × 2 × context_parallel_degree "
            "(parallel_dims.seq_len_divisor), and seq_len=8188 is not by 4 × 2 × 1 = 8");
}

TEST(ExportMegatron, NearestExpressiblePlanIsSearchedAndCosted) {
  const CostModel model(load_model("gpt3-13b"), load_machine("selene"));
  SearchOptions options;
  options.gpus = 32;
  options.top = 4;
  options.fixed = parse_fix("x=2,z=2,microbatch=4");
  const SearchResult result = search(model, options);
  ASSERT_FALSE(result.best.empty());
  const PlanRow& original = result.best.front();
  ASSERT_NE(megatron_limitation(model.spec(), model.machine(), original.config), "");

  const std::optional<PlanRow> nearest =
      nearest_expressible(ExportFormat::megatron, model, options);
  ASSERT_TRUE(nearest);
  EXPECT_EQ(nearest->config.x, 1);
  EXPECT_EQ(nearest->config.z, 1);
  EXPECT_EQ(nearest->config.microbatch, 4);  // the user's other fixed fields are kept
  EXPECT_FALSE(nearest->config.offload);
  EXPECT_EQ(megatron_limitation(model.spec(), model.machine(), nearest->config), "");
  EXPECT_NO_THROW(export_megatron(model.spec(), model.machine(), nearest->config, context()));

  const std::string message =
      inexpressible_message(ExportFormat::megatron, model, options, original);
  EXPECT_NE(message.find("Megatron-LM cannot run this plan"), std::string::npos) << message;
  EXPECT_NE(message.find("--fix " + fix_string(nearest->config)), std::string::npos) << message;
  char times[128];
  std::snprintf(times, sizeof times, "predicted %.4f s per iteration, against %.4f s",
                nearest->breakdown.iter_time, original.breakdown.iter_time);
  EXPECT_NE(message.find(times), std::string::npos) << message;
}

TEST(ExportAxonn, FourDimensionalGrid) {
  ParallelConfig c = grid(2, 2, 2, 2, 4, 8);
  c.recompute = Recompute::full;
  c.order = parse_order("xyzpd", "test");
  expect_golden("axonn_gpt3_13b.py",
                export_axonn(gpt3_13b(), gpu_machine("perlmutter", 4), c, context()));
}

// AxoNN takes a rank's device as its rank mod gpus_per_node: on GB200 that is the 4 GPUs of one
// tray (a host), not the 64 of axo's node, or every rank past the first tray asks for device 4 up.
TEST(ExportAxonn, GpusPerNodeIsOneHostsDevices) {
  MachineProfile machine = gpu_machine("gb200", 64);
  machine.gpus_per_host = 4;
  const std::string script = export_axonn(gpt3_13b(), machine, grid(1, 8, 1, 8, 1, 1), context());
  EXPECT_NE(script.find(", gpus_per_node=4)"), std::string::npos) << script;
}

TEST(ExportAxonn, NoOverlapFp32) {
  TransformerSpec spec = gpt3_13b();
  spec.precision = Precision::fp32;
  ParallelConfig c = grid(1, 4, 1, 4, 1, 2);
  c.overlap = false;
  expect_golden("axonn_gpt3_13b_fp32.py",
                export_axonn(spec, gpu_machine("frontier", 8), c, context()));
}

// fp16 scales the loss (GradScaler) where the loop is the user's (G_inter = 1): without it, small
// gradients underflow in fp16; bf16 needs none.
TEST(ExportAxonn, Fp16ScalesTheLoss) {
  TransformerSpec spec = gpt3_13b();
  spec.precision = Precision::fp16;
  const ParallelConfig c = grid(1, 4, 1, 4, 1, 2);
  const std::string fp16 = export_axonn(spec, gpu_machine("frontier", 8), c, context());
  EXPECT_NE(fp16.find("scaler = torch.amp.GradScaler(\"cuda\")"), std::string::npos) << fp16;
  EXPECT_NE(fp16.find("        scaler.scale(loss).backward()\n"), std::string::npos) << fp16;
  spec.precision = Precision::bf16;
  const std::string bf16 = export_axonn(spec, gpu_machine("frontier", 8), c, context());
  EXPECT_EQ(bf16.find("GradScaler"), std::string::npos);
  EXPECT_NE(bf16.find("        loss.backward()\n"), std::string::npos);
}

TEST(ExportAxonn, Limitations) {
  const TransformerSpec spec = gpt3_13b();
  const MachineProfile machine = gpu_machine("selene", 8);
  ParallelConfig c = grid(1, 8, 1, 8, 1, 1);
  c.sequence_parallel = true;
  EXPECT_NE(axonn_limitation(spec, machine, c).find("sequence_parallel"), std::string::npos);
  c.sequence_parallel = false;
  c.offload = true;
  EXPECT_NE(axonn_limitation(spec, machine, c).find("CPUAdam"), std::string::npos);
  c = grid(4, 2, 1, 8, 1, 1);
  c.interleave = 2;
  EXPECT_NE(axonn_limitation(spec, machine, c).find("interleave=2"), std::string::npos);
  EXPECT_THROW(export_axonn(spec, machine, c, context()), InputError);
  c = grid(1, 4, 1, 1, 1, 1);
  c.context = 2;
  EXPECT_NE(axonn_limitation(spec, machine, c).find("no context parallelism"), std::string::npos);
  EXPECT_THROW(export_axonn(spec, machine, c, context()), InputError);
  EXPECT_EQ(expressible_fields(ExportFormat::axonn, TransformerSpec{}, FixedFields{}, false).values.context, 1);
}

// Partial recompute as each framework names it: Megatron's block method; AxoNN's checkpointed
// blocks; torchtitan's every k-th block, at least as many as the plan recomputes.
TEST(Export, PartialRecomputeAsEachFrameworkNamesIt) {
  ParallelConfig c = grid(4, 1, 1, 4, 1, 2);  // gpt3-13b's 40 layers: 5 per chunk of 4 x 2
  c.recompute = Recompute::full, c.recompute_layers = 2, c.interleave = 2, c.sequence_parallel = true;
  const MachineProfile machine = gpu_machine("dgx-h100", 8);
  ASSERT_EQ(priced_split(gpt3_13b(), c).text(), "5+5,5+5,5+5,5+5");
  const std::string megatron = export_megatron(gpt3_13b(), machine, c, context());
  EXPECT_NE(megatron.find("--recompute-granularity full\n  --recompute-method block\n  --recompute-num-layers 2\n"),
            std::string::npos)
      << megatron;
  const std::string torchtitan = export_torchtitan(gpt3_13b(), machine, c, context());
  EXPECT_NE(torchtitan.find("mode = \"selective\"\nselective_ac_option = \"2\"\n"), std::string::npos) << torchtitan;
  c.recompute_layers = 3;  // 1 block in 1: every block
  EXPECT_NE(export_torchtitan(gpt3_13b(), machine, c, context()).find("selective_ac_option = \"1\""),
            std::string::npos);
  c.recompute_layers = 5;  // the whole chunk: full recompute
  EXPECT_NE(export_torchtitan(gpt3_13b(), machine, c, context()).find("mode = \"full\""), std::string::npos);
  // llama3-8b's chunks are 5+4,4+4,4+4,4+3: every k-th block covers the smallest, 3 (k = 3/2).
  c.recompute_layers = 2;
  EXPECT_NE(export_torchtitan(llama3_8b(), machine, c, context()).find("selective_ac_option = \"1\""),
            std::string::npos);
  // recompute_layers=3 to 4 covers the 3-layer chunk whole but not the others: no k expresses it
  // (it was exported as full recompute of every layer, which the plan did not price); 5 is full.
  c.recompute_layers = 4;
  EXPECT_NE(torchtitan_limitation(llama3_8b(), machine, c).find("recompute_layers=4 covers a whole part of 3 layers"),
            std::string::npos) << torchtitan_limitation(llama3_8b(), machine, c);
  c.recompute_layers = 5;
  EXPECT_EQ(torchtitan_limitation(llama3_8b(), machine, c), "");
  EXPECT_NE(export_torchtitan(llama3_8b(), machine, c, context()).find("mode = \"full\""), std::string::npos);
  c = grid(2, 2, 2, 2, 4, 8);
  c.recompute = Recompute::full, c.recompute_layers = 2;
  const std::string axonn = export_axonn(gpt3_13b(), gpu_machine("perlmutter", 4), c, context());
  EXPECT_NE(axonn.find("Recompute full on the first 2 transformer blocks of each stage"), std::string::npos) << axonn;
}

// The bug this guards: llama3-8b's 32 layers divide over 2 stages (of 4 chunks), yet
// axo splits them 17,15 (5+4+4+4,4+4+4+3), balancing its LM head. Each export writes
// that split where the framework can hold it, or refuses; none writes equal stages.
TEST(Export, UnequalSplitWhereTheLayersDivide) {
  const TransformerSpec spec = llama3_8b();
  const MachineProfile machine = gpu_machine("dgx-h100", 8);
  ParallelConfig c = grid(2, 1, 1, 1, 1, 4);  // no replicas: torchtitan's DDP runs only over every rank
  c.recompute = Recompute::full;
  ASSERT_EQ(priced_split(spec, c).text(), "17,15");
  const std::string megatron = export_megatron(spec, machine, c, context());
  EXPECT_NE(megatron.find("  --decoder-first-pipeline-num-layers 17\n  --decoder-last-pipeline-num-layers 15\n"),
            std::string::npos) << megatron;
  const std::string titan = export_torchtitan(spec, machine, c, context());
  EXPECT_EQ(titan.find("pipeline_parallel_layers_per_stage"), std::string::npos) << titan;
  EXPECT_EQ(titan.find("Equal stages"), std::string::npos) << titan;
  EXPECT_NE(titan.find("\"layers.15\", \"layers.16\"],\n  [\"layers.17\", "), std::string::npos) << titan;
  EXPECT_NE(titan.find("\"layers.31\", \"norm\", \"output\"],\n]\n"), std::string::npos) << titan;
  EXPECT_NE(titan.find("module_fqns_per_model_part = [\n  [\"tok_embeddings\", \"layers.0\", "), std::string::npos);
  EXPECT_NE(deepspeed_limitation(spec, machine, c).find("as 17,15 (its LM head weighs as much as 1.8 layers"),
            std::string::npos) << deepspeed_limitation(spec, machine, c);
  c.order = parse_order("xyzpd", "test");  // AxoNN's rank order
  const std::string axonn = export_axonn(spec, machine, c, context());
  EXPECT_NE(axonn.find("STAGE_LAYERS = [(0, 17), (17, 32)]\n"
                       "first_layer, end_layer = STAGE_LAYERS[ax.config.inter_layer_parallel_rank]\n"),
            std::string::npos) << axonn;
  EXPECT_EQ(axonn.find("16 transformer layers"), std::string::npos) << axonn;

  c = grid(2, 1, 1, 1, 1, 8);
  c.interleave = 4;
  ASSERT_EQ(priced_split(spec, c).text(), "5+4+4+4,4+4+4+3");
  // Megatron-Core's layout lists the chunks in layer order, chunk k on rank k mod 2.
  EXPECT_NE(export_megatron(spec, machine, c, context())
                .find("  --pipeline-model-parallel-layout \"Et*5|t*4|t*4|t*4|t*4|t*4|t*4|t*3L\"\n"),
            std::string::npos);
  const std::string looped = export_torchtitan(spec, machine, c, context());
  EXPECT_EQ(looped.find("pipeline_parallel_layers_per_stage"), std::string::npos) << looped;
  // Eight model parts, chunk k on rank k mod 2: the first five layers with the embedding.
  EXPECT_NE(looped.find("  [\"tok_embeddings\", \"layers.0\", \"layers.1\", \"layers.2\", \"layers.3\", "
                        "\"layers.4\"],\n  [\"layers.5\", \"layers.6\", \"layers.7\", \"layers.8\"],\n"),
            std::string::npos) << looped;
  EXPECT_NE(looped.find("\n  [\"layers.29\", \"layers.30\", \"layers.31\", \"norm\", \"output\"],\n]\n"),
            std::string::npos) << looped;
}

// Where axo's chunks are equal the exports say so compactly: gpt3-13b's head weighs less
// than a layer, so its 40 layers over 4 x 2 chunks are 5 each.
TEST(Export, EqualChunksKeepTheirCompactForm) {
  ParallelConfig c = grid(4, 1, 1, 8, 1, 1);
  c.interleave = 2;
  c.order = parse_order("xyczdp", "test");
  const MachineProfile machine = gpu_machine("selene", 8);
  EXPECT_NE(export_megatron(gpt3_13b(), machine, c, context()).find("  --num-layers-per-virtual-pipeline-stage 5\n"),
            std::string::npos);
  c.sequence_parallel = true;  // torchtitan's tensor parallelism
  const std::string titan = export_torchtitan(gpt3_13b(), machine, c, context());
  EXPECT_NE(titan.find("pipeline_parallel_layers_per_stage = 5\n"), std::string::npos) << titan;
  EXPECT_EQ(titan.find("module_fqns_per_model_part"), std::string::npos) << titan;
}

TEST(ExportTorchtitan, TensorPipelineAndReplicas) {
  ParallelConfig c = grid(4, 2, 1, 4, 2, 2);  // HSDP: DDP alone runs only over every rank
  c.recompute = Recompute::selective;
  c.sequence_parallel = true;
  c.interleave = 2;
  expect_golden("torchtitan_llama3_8b.toml",
                export_torchtitan(llama3_8b(), gpu_machine("dgx-h100", 8), c, context()));
}

TEST(ExportTorchtitan, HybridShardedDataParallel) {
  ParallelConfig c = grid(1, 2, 1, 1, 8, 16);
  c.recompute = Recompute::full;
  expect_golden("torchtitan_llama3_8b_hsdp.toml",
                export_torchtitan(llama3_8b(), gpu_machine("dgx-h100", 8), c, context()));
}

// torchtitan's 2D parallelism: FSDP (axo's z) beside sequence-parallel TP (y),
// as its Llama 3.1 70B and 405B runs train.
TEST(ExportTorchtitan, FsdpWithSequenceParallelTensorParallelism) {
  ParallelConfig c = grid(1, 1, 1, 4, 2, 4);
  c.sequence_parallel = true;
  c.order = parse_order("xyczdp", "test");
  const std::string text = export_torchtitan(llama3_8b(), gpu_machine("dgx-h100", 8), c, context());
  EXPECT_NE(text.find("data_parallel_shard_degree = 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor_parallel_degree = 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("local_batch_size = 2\n"), std::string::npos) << text;  // microbatch 4 over z = 2
  c.sequence_parallel = false;
  EXPECT_NE(torchtitan_limitation(llama3_8b(), gpu_machine("dgx-h100", 8), c).find("sequence_parallel=on"),
            std::string::npos);
}

// The machine's stack as priced: asynchronous TP only where its TP collectives are hidden
// (tp_collectives overlapped), a note where it priced a bf16 reduction, and float8 FSDP gathers
// only where the stack gathers fp8 (fp8_weights gathered); fp8 with y > 1 is refused (v0.2.2's
// float8 tensor parallelism is off).
TEST(ExportTorchtitan, TheMachinesStackAsPriced) {
  ParallelConfig c = grid(1, 1, 1, 4, 2, 4);
  c.sequence_parallel = true;
  c.order = parse_order("xyczdp", "test");
  MachineProfile machine = gpu_machine("dgx-h100", 8);
  machine.reduce_dtype = ReduceDtype::fp32;
  const std::string overlapped = export_torchtitan(llama3_8b(), machine, c, context());
  EXPECT_EQ(overlapped.find("reduces gradients in float32"), std::string::npos) << overlapped;
  EXPECT_NE(overlapped.find("enable_async_tensor_parallel = true\n"), std::string::npos) << overlapped;
  machine.tp_collectives = TpCollectives::exposed, machine.reduce_dtype = ReduceDtype::compute;
  const std::string eager = export_torchtitan(llama3_8b(), machine, c, context());
  EXPECT_EQ(eager.find("enable_async_tensor_parallel"), std::string::npos) << eager;
  EXPECT_EQ(eager.find("[compile]"), std::string::npos) << eager;
  EXPECT_NE(eager.find("the plan was priced reducing in bf16"), std::string::npos) << eager;

  TransformerSpec fp8 = llama3_8b();
  fp8.precision = Precision::fp8;
  EXPECT_NE(torchtitan_limitation(fp8, machine, c).find("float8 tensor parallelism is off at v0.2.2"),
            std::string::npos);
  ParallelConfig fsdp = grid(1, 1, 1, 1, 8, 8);
  fsdp.order = parse_order("xyczdp", "test");
  machine.fp8_weights = Fp8Weights::transient;
  const std::string transient = export_torchtitan(fp8, machine, fsdp, context());
  EXPECT_EQ(transient.find("enable_fsdp_float8_all_gather"), std::string::npos) << transient;
  machine.fp8_weights = Fp8Weights::gathered;
  const std::string gathered = export_torchtitan(fp8, machine, fsdp, context());
  EXPECT_NE(gathered.find("enable_fsdp_float8_all_gather = true\nprecompute_float8_dynamic_scale_for_fsdp = true\n"),
            std::string::npos) << gathered;
}

TEST(ExportTorchtitan, ContextParallelDegree) {
  ParallelConfig c = grid(1, 1, 1, 1, 4, 4);
  c.context = 4;
  c.order = parse_order("xyczdp", "test");  // torchtitan's mesh: cp inside fsdp
  const std::string text = export_torchtitan(llama3_8b(), gpu_machine("dgx-h100", 8), c, context());
  EXPECT_NE(text.find("context_parallel_degree = 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("data_parallel_shard_degree = 4\n"), std::string::npos) << text;
  // axo's default order puts z inside context, which is not torchtitan's mesh.
  c.order = ParallelConfig{}.order;
  EXPECT_NE(torchtitan_limitation(llama3_8b(), gpu_machine("dgx-h100", 8), c).find("xyczdp"), std::string::npos);
}

// fp8 llama3-8b on 16 H100s: the fastest plans shard the optimizer (zero > 0), which
// torchtitan has no counterpart for; the nearest search holds zero=0, so it finds one.
TEST(ExportTorchtitan, NearestPlanHoldsZeroAtZero) {
  TransformerSpec spec = load_model("llama3-8b");
  spec.precision = Precision::fp8;
  const CostModel model(spec, load_machine("dgx-h100"));
  SearchOptions options;
  options.gpus = 16;
  const std::optional<PlanRow> nearest = nearest_expressible(ExportFormat::torchtitan, model, options);
  ASSERT_TRUE(nearest);
  EXPECT_EQ(nearest->config.zero, 0);
  EXPECT_EQ(torchtitan_limitation(spec, model.machine(), nearest->config), "");
  for (ExportFormat format : {ExportFormat::torchtitan, ExportFormat::axonn}) {
    const FixedFields fixed = expressible_fields(format, TransformerSpec{}, parse_fix("zero=1"), false);
    EXPECT_TRUE(fixed.holds("zero"));
    EXPECT_EQ(fixed.values.zero, 0) << to_string(format);
  }
}

TEST(ExportTorchtitan, Limitations) {
  const TransformerSpec spec = llama3_8b();
  const MachineProfile machine = gpu_machine("dgx-h100", 8);
  EXPECT_NE(torchtitan_limitation(spec, machine, grid(1, 4, 2, 1, 1, 1)).find("x=1"),
            std::string::npos);
  EXPECT_NE(torchtitan_limitation(spec, machine, grid(1, 4, 1, 2, 1, 1)).find("sequence_parallel=on"),
            std::string::npos);
  ParallelConfig c = grid(1, 2, 1, 1, 4, 4);
  c.overlap = false;
  EXPECT_NE(torchtitan_limitation(spec, machine, c).find("overlap=off"), std::string::npos);
  c.overlap = true;
  c.offload = true;
  EXPECT_NE(torchtitan_limitation(spec, machine, c).find("enable_cpu_offload"), std::string::npos);
  EXPECT_THROW(export_torchtitan(spec, machine, c, context()), InputError);
  // fp16 is the model's, not the plan's: refused before any plan (export_model_problem).
  TransformerSpec fp16 = spec;
  fp16.precision = Precision::fp16;
  EXPECT_NE(export_model_problem(ExportFormat::torchtitan, fp16).find("fp16"), std::string::npos);
  EXPECT_NE(testing::input_error_of([&] { export_plan(ExportFormat::torchtitan, fp16, machine, grid(1, 8, 1, 1, 1, 1), context()); })
                .find("torchtitan does not train in fp16"),
            std::string::npos);
}

// ZeRO-1 with the optimizer on the host, two equal stages of 20 layers; the
// values themselves are checked in export_deepspeed_test.cc.
TEST(ExportDeepspeed, ConfigAndArguments) {
  ParallelConfig c = grid(2, 4, 1, 8, 1, 2);
  c.zero = 1;
  c.offload = true;
  c.sequence_parallel = true;
  c.recompute = Recompute::selective;
  MachineProfile machine = gpu_machine("selene", 8);
  machine.grad_reduce = GradReduce::after_backward;  // as its preset, and DeepSpeed's PipelineEngine
  expect_golden("deepspeed_gpt3_13b.json", export_deepspeed(gpt3_13b(), machine, c, context()));
  expect_golden("deepspeed_gpt3_13b.args.sh",
                deepspeed_launch_arguments(gpt3_13b(), machine, c, context()));
}

// The rotary details Megatron-DeepSpeed states (megatron/arguments.py at f4157be:
// --rotary-position-embeddings-theta, --rotary-percent, --layernorm-epsilon), where they are not
// its defaults; a fractional rotary base neither Megatron takes.
TEST(ExportDeepspeed, RotaryDetails) {
  ParallelConfig c = grid(1, 8, 1, 1, 1, 1);
  c.zero = 1;  // overlaps the reduction, as the stack prices it
  TransformerSpec spec = llama3_8b();
  spec.rotary_percent = 0.25, spec.norm_epsilon = 1e-6;
  const std::string arguments =
      deepspeed_launch_arguments(spec, gpu_machine("dgx-h100", 8), c, context());
  EXPECT_NE(arguments.find("  --use-rotary-position-embeddings\n  --rotary-position-embeddings-theta 500000\n"
                           "  --rotary-percent 0.25\n  --layernorm-epsilon 1e-06\n"),
            std::string::npos)
      << arguments;
  EXPECT_EQ(export_model_problem(ExportFormat::deepspeed, spec), "");
  TransformerSpec defaults = llama3_8b();
  defaults.rope_theta = kDefaultRopeTheta;
  const std::string plain =
      deepspeed_launch_arguments(defaults, gpu_machine("dgx-h100", 8), c, context());
  for (const char* flag : {"--rotary-position-embeddings-theta", "--rotary-percent", "--layernorm-epsilon"}) {
    EXPECT_EQ(plain.find(flag), std::string::npos) << flag;
  }
  defaults.rope_theta = 10000.5;
  EXPECT_NE(export_model_problem(ExportFormat::megatron, defaults).find("a rotary base that is not a whole number"),
            std::string::npos);
}

// A model with details priced as their nearest (a config.json's ReLU) is refused by the exports that
// state a model's architecture, naming them; the others state the parallelism alone.
TEST(Export, ApproximatedModelsAreRefusedWhereTheArchitectureIsStated) {
  TransformerSpec qwen = llama3_8b();
  qwen.name = "qwen2-7b";
  qwen.approximations = {"an MLP of relu, priced as GELU's"};
  const std::string why = export_model_problem(ExportFormat::megatron, qwen);
  EXPECT_EQ(why, "the arguments for Megatron-LM would state another model than qwen2-7b: axo writes no flag for "
                 "these details of it: an MLP of relu, priced as GELU's");
  EXPECT_NE(export_model_problem(ExportFormat::deepspeed, qwen), "");
  EXPECT_EQ(export_model_problem(ExportFormat::torchtitan, qwen), "");
  EXPECT_EQ(export_model_problem(ExportFormat::axonn, qwen), "");
  EXPECT_EQ(export_model_problem(ExportFormat::megatron, llama3_8b()), "");
  EXPECT_THROW(export_plan(ExportFormat::megatron, qwen, gpu_machine("dgx-h100", 8), grid(1, 8, 1, 1, 1, 1),
                           context()),
               InputError);
}

// A learned table's rows, not the sequence, are Megatron's --max-position-embeddings; per-head q/k
// norms are Megatron-LM's --qk-layernorm, which Megatron-DeepSpeed's arguments lack.
TEST(ExportMegatron, PositionTableAndQkNorms) {
  TransformerSpec gpt = gpt3_13b();
  gpt.position_table = 4096;
  const std::string text = export_megatron(gpt, gpu_machine("selene", 8), grid(1, 8, 1, 1, 1, 1), context());
  EXPECT_NE(text.find("  --seq-length 2048\n  --max-position-embeddings 4096\n"), std::string::npos) << text;
  TransformerSpec qwen3 = llama3_8b();
  qwen3.qk_norm = true;
  EXPECT_NE(export_megatron(qwen3, gpu_machine("dgx-h100", 8), grid(1, 8, 1, 1, 1, 1), context()).find("  --qk-layernorm\n"),
            std::string::npos);
  EXPECT_NE(export_model_problem(ExportFormat::deepspeed, qwen3).find("norms of q and k (qk_norm)"), std::string::npos);
}

TEST(ExportSlurm, GpuNodes) {
  ExportContext ctx = context();
  ctx.plan_path = "runs/plan.yaml";
  expect_golden("slurm_gpt3_13b.sbatch",
                export_slurm(gpt3_13b(), gpu_machine("selene", 8), grid(2, 4, 1, 8, 1, 2), ctx));
}

TEST(ExportSlurm, CpuRanksFillNodesAndPathsAreQuoted) {
  MachineProfile machine = gpu_machine("laptop", 4);
  machine.backend = "cpu";
  ExportContext ctx;
  ctx.plan_path = "my runs/plan's.yaml";
  expect_golden("slurm_cpu.sbatch",
                export_slurm(gpt3_13b(), machine, grid(1, 2, 1, 1, 1, 4), ctx));
}

// GB200: a Slurm node is a 4-GPU tray, axo's node a 64-GPU segment of one NVLink domain that
// --segment keeps whole; a job whose last segment is partial cannot be placed so and is refused.
TEST(ExportSlurm, HostsOfOneNvlinkDomainAreOneSegment) {
  MachineProfile machine = gpu_machine("gb200", 64);
  machine.gpus_per_host = 4;
  const std::string big = export_slurm(gpt3_13b(), machine, grid(2, 8, 1, 8, 1, 1), context());  // 128 GPUs
  for (const char* line : {"--nodes=32\n", "--ntasks=128\n", "--ntasks-per-node=4\n", "--segment=16\n"}) {
    EXPECT_NE(big.find(std::string("#SBATCH ") + line), std::string::npos) << line << big;
  }
  const std::string small = export_slurm(gpt3_13b(), machine, grid(1, 3, 1, 4, 1, 1), context());  // 12 GPUs
  EXPECT_NE(small.find("#SBATCH --segment=3\n"), std::string::npos) << small;
  const std::string error = testing::input_error_of(
      [&] { export_slurm(gpt3_13b(), machine, grid(1, 9, 1, 8, 1, 1), context()); });  // 72 GPUs
  EXPECT_NE(error.find("72 GPUs are 18 hosts of 4, not whole 16-host nodes"), std::string::npos) << error;
  machine.gpus_per_host = 0;  // a node is one host: no segment
  EXPECT_EQ(export_slurm(gpt3_13b(), machine, grid(2, 8, 1, 8, 1, 1), context()).find("--segment"),
            std::string::npos);
}

// sbatch splits an #SBATCH line at blanks: a model name's spaces and other marks become '-'.
TEST(ExportSlurm, TheJobNameIsOneWord) {
  TransformerSpec spec = gpt3_13b();
  spec.name = "my model: v2 (test)";
  const std::string script = export_slurm(spec, gpu_machine("selene", 8), grid(2, 4, 1, 8, 1, 2), context());
  EXPECT_NE(script.find("#SBATCH --job-name=axo-my-model--v2--test-\n"), std::string::npos) << script;
}

TEST(Export, FormatsFixStringsAndPlacement) {
  EXPECT_EQ(parse_export_format("torchtitan"), ExportFormat::torchtitan);
  try {
    parse_export_format("colossalai");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown format 'colossalai'"), std::string::npos);
  }
  ParallelConfig c = grid(2, 4, 1, 8, 1, 2);
  c.recompute = Recompute::selective;
  c.sequence_parallel = true;
  c.interleave = 2;
  c.order = parse_order("yxzpd", "test");
  const FixedFields fixed = parse_fix(fix_string(c));
  EXPECT_TRUE(fixed.all_grid_fixed());
  EXPECT_EQ(fixed.values, c);
  // x = 1 and y fills a node: x's and y's places do not matter, nor does d vs p
  // once both span nodes with one rank each.
  EXPECT_TRUE(places_groups_as(c, "xyzdp", pair_groups(), 8));
  // An export that runs the framework's order says so where the plan's differs.
  EXPECT_EQ(same_placement_note(c, "yxzpcd", 8), "");
  EXPECT_EQ(same_placement_note(c, "xyzcdp", 8), "; the plan's yxzpcd places its groups as xyzcdp does on 8-GPU nodes");
  EXPECT_FALSE(places_groups_as(grid(4, 2, 1, 2, 1, 1), "xyzpd", pair_groups(), 8));
  // Each group alike but data x context: 3 context ranks inside 2 data ranks are one group of 6
  // (2 a node on 4-GPU nodes); with the pipeline between them, a box of 1 a node.
  ParallelConfig context = grid(2, 2, 1, 1, 1, 1);
  context.context = 3;
  EXPECT_FALSE(places_groups_as(context, "xyzcpd", pair_groups(), 4));
  // Where the stage's group is priced (fp8 under Transformer Engine), two orders that place every
  // other group alike may place a stage's ranks apart: x and context (12 ranks) span more than a
  // node either way, but with the pipeline just outside them a stage holds 4 ranks a node, not 8.
  ParallelConfig fp8 = grid(4, 4, 2, 4, 2, 1);
  fp8.context = 6;
  fp8.order = parse_order("xcyzdp", "test");
  EXPECT_TRUE(places_groups_as(fp8, "xcpyzd", pair_groups(), 8));
  std::vector<GridDims> with_stage = pair_groups();
  with_stage.push_back(kStageDims);
  EXPECT_FALSE(places_groups_as(fp8, "xcpyzd", with_stage, 8));
}

}  // namespace
}  // namespace axo
