// The public corpus as axo expresses it: it parses, one row per source becomes
// the model and configuration its source describes, and the rows axo cannot
// express say why.
#include "planner/validation_corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "model/error.h"
#include "model/presets.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

const std::vector<CorpusCase>& corpus() {
  static const std::vector<CorpusCase> cases = load_corpus(config_dir() + "/validation/public-runs.yaml");
  return cases;
}

const CorpusCase& find(const std::string& name) {
  for (const CorpusCase& c : corpus()) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no corpus row " + name);
}

TEST(ValidationCorpus, ParsesEveryRow) {
  ASSERT_EQ(corpus().size(), 335u);
  int expressed = 0;
  for (const CorpusCase& c : corpus()) {
    EXPECT_TRUE(c.source == "dgxc" || c.source == "mpt" || c.source == "torchtitan") << c.name;
    if (!c.expressed()) continue;
    ++expressed;
    EXPECT_GT(c.measured_s, 0) << c.name;
    EXPECT_EQ(c.config.gpus(), c.gpus) << c.name;
    EXPECT_FALSE(c.machine.empty()) << c.name;
  }
  EXPECT_GT(expressed, 150);
}

TEST(ValidationCorpus, MegatronRowIsDataTensorPipeline) {
  const CorpusCase& c = find("dgxc_gpt3_175b_bf16_128xH100_v24.11.1");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.machine, "dgx-h100");
  EXPECT_EQ(c.gpu, "H100-80");
  EXPECT_EQ(c.model.layers, 96);
  EXPECT_EQ(c.model.hidden, 12288);
  EXPECT_EQ(c.model.kv_heads, 96);
  EXPECT_EQ(c.model.ffn_hidden, 49152);
  EXPECT_EQ(c.model.vocab, 51200);
  EXPECT_EQ(c.model.global_batch, 256);
  EXPECT_EQ(c.model.mlp, MlpKind::gelu);
  EXPECT_EQ(c.model.positions, PositionKind::learned);
  EXPECT_TRUE(c.model.bias);
  EXPECT_TRUE(c.model.dropout);
  ParallelConfig expected;
  expected.pipeline = 8;
  expected.data = 4;
  expected.y = 4;
  expected.microbatch = 1;
  expected.interleave = 12;
  expected.recompute = Recompute::none;
  expected.sequence_parallel = true;
  expected.zero = 1;  // "distributed optimizer" in other_parallel: Megatron's ZeRO-1
  EXPECT_EQ(c.config, expected);
  EXPECT_DOUBLE_EQ(c.measured_s, 8.91);
  EXPECT_EQ(c.measured_from, "iter_time_s");
  EXPECT_EQ(c.memory_caveat, "");  // the memory model shards the optimizer state as the run did
  EXPECT_EQ(c.stack.attention, AttentionKind::flash);  // its launcher turned TE's cuDNN kernel off (recipes:)
  EXPECT_EQ(c.stack.weight_gather, WeightGather::per_linear);
  EXPECT_EQ(c.stack.elementwise, ElementwiseKind::fused);  // Megatron-Core: Transformer Engine's fused kernels
}

TEST(ValidationCorpus, MosaicFullShardIsZ) {
  const CorpusCase& c = find("mpt_70b_h100_80gb_512gpu_seq2048_gbs4096_amp_bf16");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.machine, "dgx-h100");
  EXPECT_EQ(c.stack.attention, AttentionKind::flash);            // FlashAttention-2 on the same GPU
  EXPECT_EQ(c.stack.weight_gather, WeightGather::per_block);     // FSDP: one gather per MPTBlock
  EXPECT_EQ(c.stack.elementwise, ElementwiseKind::eager);         // llm-foundry runs eager PyTorch
  EXPECT_EQ(c.stack.backward_prefetch, BackwardPrefetch::post);   // Composer's FSDP default: BACKWARD_POST
  EXPECT_EQ(c.model.vocab, 50368);
  EXPECT_FALSE(c.model.bias);
  EXPECT_TRUE(c.model.tied_embeddings);
  ParallelConfig expected;
  expected.z = 512;
  expected.microbatch = 8 * 512;  // 8 sequences per GPU, one microbatch per step (grad accum 1)
  expected.recompute = Recompute::full;
  EXPECT_EQ(c.config, expected);
  EXPECT_DOUBLE_EQ(c.measured_s, 16.268);
}

// FSDP SHARD_GRAD_OP keeps whole weights and shards gradients and optimizer state: ZeRO-2
// over the data group, not AxoNN's Z.
TEST(ValidationCorpus, MosaicShardGradOpIsZeroTwoOverData) {
  const CorpusCase& c = find("mpt_3b_h100_80gb_512gpu_seq2048_gbs4096_amp_bf16");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  ParallelConfig expected;
  expected.data = 512;
  expected.zero = 2;
  expected.microbatch = 8;  // per replica, grad accum 1
  EXPECT_EQ(c.config, expected);
  EXPECT_EQ(c.stack.loss, LossKind::fused);                // llm-foundry's fused_crossentropy
  EXPECT_EQ(c.stack.fp8_weights, Fp8Weights::transient);  // te.Linear without a weight cache
}

// GB200 NVL72 runs are priced on the NVL72 preset; NeMo's fp8 plugin keeps fp8 primary weights.
TEST(ValidationCorpus, GB200RowsRunOnTheNvl72Preset) {
  const CorpusCase& c = find("dgxc_nemotron4_340b_bf16_128xGB200_v25.05.05");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.machine, "gb200-nvl72");
  EXPECT_EQ(c.gpu, "GB200");
  EXPECT_EQ(c.stack.fp8_weights, Fp8Weights::primary);
  EXPECT_EQ(c.config.gpus(), 128);
}

// torchtitan's FSDP spans dp_shard x cp: gradients and optimizer shard over the CP ranks too.
TEST(ValidationCorpus, TorchtitanFsdpWithContextShardsOverContext) {
  const CorpusCase& c = find("torchtitan_dec24_llama31_8b_8xH100_cp4_seq131072");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.config.context, 4);
  EXPECT_EQ(c.config.z, 2);
  EXPECT_EQ(c.config.zero, 2);
  EXPECT_EQ(find("torchtitan_dec24_llama31_8b_8xH100_fsdp").config.zero, 0);  // no CP: z alone
  EXPECT_EQ(c.stack.selective, SelectiveKind::per_op);  // torchtitan's op-level policy
}

// The Nemotron-4 340B recipe's distributed_fused_adam keeps its state in bf16; other recipes fp32.
TEST(ValidationCorpus, RecipeSettingsMatchTheSourceCell) {
  EXPECT_EQ(find("dgxc_nemotron4_340b_bf16_128xH100").stack.optimizer_state, OptimizerState::bf16);
  EXPECT_EQ(find("dgxc_nemotron4_340b_fp8_128xH100").stack.optimizer_state, OptimizerState::bf16);
  EXPECT_EQ(find("dgxc_nemotron4_340b_bf16_256xH100_v25.05.05").stack.optimizer_state, OptimizerState::fp32);
  EXPECT_EQ(find("dgxc_llama31_405b_fp8_576xH100").stack.optimizer_state, OptimizerState::fp32);
}

// Recipes that set NVTE_FUSED_ATTN=0 run Transformer Engine's flash-attn backend (FlashAttention-2):
// GPT-3 175B @35a9aecc and Nemotron-4 340B @1b9bb6b3; the others keep the machine entry's cuDNN kernel.
TEST(ValidationCorpus, RecipeAttentionBackendOverridesTheMachineEntry) {
  EXPECT_EQ(find("dgxc_gpt3_175b_bf16_128xH100_v24.11.1").stack.attention, AttentionKind::flash);
  EXPECT_EQ(find("dgxc_nemotron4_340b_fp8_128xH100").stack.attention, AttentionKind::flash);
  EXPECT_EQ(find("dgxc_gpt3_175b_bf16_128xH100_v25.02").stack.attention, AttentionKind::flash3);
  EXPECT_EQ(find("dgxc_nemotron4_15b_bf16_16xH100").stack.attention, AttentionKind::flash3);
  EXPECT_EQ(find("dgxc_llama31_405b_fp8_576xH100").stack.attention, AttentionKind::flash3);
}

// The dgxc v25.05.05 Llama 3.1 405B rows leave recompute and sequence parallelism "not stated";
// the NeMo performance recipe they ran (recipes:) fills them: no recompute, sequence parallel.
TEST(ValidationCorpus, RecipeFillsCellsTheRowLeavesNotStated) {
  for (const char* name : {"dgxc_llama31_405b_bf16_512xH100_v25.05.05", "dgxc_llama31_405b_bf16_128xGB200_v25.05.05"}) {
    const CorpusCase& c = find(name);
    ASSERT_TRUE(c.expressed()) << name << ": " << c.why_not;
    EXPECT_EQ(c.config.recompute, Recompute::none) << name;
    EXPECT_TRUE(c.config.sequence_parallel) << name;
  }
}

TEST(ValidationCorpus, TorchtitanFsdpRowsTakeTimeFromTokens) {
  const CorpusCase& c = find("torchtitan_llama213b_64xA100_lbs2_none");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.machine, "selene");
  EXPECT_EQ(c.gpu, "A100-80");
  EXPECT_EQ(c.model.vocab, 32000);
  EXPECT_EQ(c.model.kv_heads, 40);  // Llama 2 13B: multi-head
  EXPECT_EQ(c.model.mlp, MlpKind::swiglu);
  EXPECT_EQ(c.model.norm, NormKind::rmsnorm);
  EXPECT_EQ(c.config.z, 64);
  EXPECT_EQ(c.config.data, 1);
  EXPECT_EQ(c.config.microbatch, 128);
  EXPECT_EQ(c.measured_from, "tokens_per_s");
  EXPECT_DOUBLE_EQ(c.measured_s, 128.0 * 4096 / 138368);

  const CorpusCase& tp = find("torchtitan_llama31_405b_128xH100_none");
  ASSERT_TRUE(tp.expressed()) << tp.why_not;
  EXPECT_EQ(tp.machine, "grand-teton-h100");
  EXPECT_EQ(tp.model.kv_heads, 8);
  EXPECT_EQ(tp.model.vocab, 128256);
  EXPECT_EQ(tp.config.y, 8);
  EXPECT_EQ(tp.config.z, 16);
  EXPECT_EQ(tp.config.microbatch, 32);
  EXPECT_TRUE(tp.config.sequence_parallel);  // torchtitan's TP is sequence-parallel, beside FSDP's z
  for (const std::string& note : tp.notes) EXPECT_EQ(note.find("priced without"), std::string::npos) << note;
}

TEST(ValidationCorpus, ContextParallelRowsAreExpressed) {
  const CorpusCase& c = find("dgxc_llama31_70b_bf16_64xH100");  // TP 4, PP 4, DP 2, CP=2
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.config.context, 2);
  EXPECT_EQ(c.config.data, 2);
  EXPECT_EQ(c.config.gpus(), 64);
}

// torchtitan runs eager unless the row ran under torch.compile: it says so, or
// it needs it (async TP; float8 linears).
TEST(ValidationCorpus, TorchCompileFusesTheElementwiseOps) {
  EXPECT_EQ(find("torchtitan_dec24_llama31_8b_8xH100_fsdp").stack.elementwise, ElementwiseKind::eager);
  EXPECT_EQ(find("torchtitan_dec24_llama31_8b_8xH100_fsdp").stack.backward_prefetch, BackwardPrefetch::pre);  // FSDP2
  for (const char* name : {"torchtitan_dec24_llama31_8b_8xH100_fsdp_compile", "torchtitan_jun25_l8_64xH100_bf16_vanillaTP",
                           "torchtitan_llama31_405b_128xH100_float8_asyncTP", "torchtitan_llama31_405b_128xH100_float8"}) {
    EXPECT_EQ(find(name).stack.elementwise, ElementwiseKind::fused) << name;
  }
  EXPECT_EQ(find("torchtitan_llama31_405b_128xH100_none").stack.elementwise, ElementwiseKind::eager);
}

// FSDP's gradient reduction dtype: torchtitan's FSDP2 reduces in fp32 (mixed_precision_reduce),
// Composer's DEFAULT in fp32 and its PURE in bf16 (the MPT rows' MP Mode); Megatron's rows compute.
TEST(ValidationCorpus, FsdpReduceDtypeFollowsTheStackAndTheRow) {
  EXPECT_EQ(find("mpt_1b_h100_80gb_8gpu_seq2048_gbs112_amp_bf16").stack.reduce_dtype, ReduceDtype::fp32);
  EXPECT_EQ(find("mpt_7b_a100_40gb_8gpu_seq2048_gbs384_bf16").stack.reduce_dtype, ReduceDtype::compute);
  EXPECT_EQ(find("mpt_70b_a100_80gb_32gpu_seq2048_gbs1024_bf16").stack.reduce_dtype, ReduceDtype::compute);
  EXPECT_EQ(find("torchtitan_dec24_llama31_8b_8xH100_fsdp").stack.reduce_dtype, ReduceDtype::fp32);
  EXPECT_EQ(find("torchtitan_llama38b_64xA100_lbs1_selective_op").stack.reduce_dtype, ReduceDtype::fp32);
  EXPECT_EQ(find("dgxc_gpt3_175b_bf16_128xH100_v24.11.1").stack.reduce_dtype, ReduceDtype::compute);
}

// torchtitan's eager DTensor TP exposes its backward TP collectives; its async TP
// (the row says so) micro-pipelines them with the GEMMs, as Megatron-LM hides them.
TEST(ValidationCorpus, TorchtitanTpCollectivesAreExposedUnlessAsync) {
  for (const char* name : {"torchtitan_llama31_405b_128xH100_none", "torchtitan_llama31_405b_128xH100_float8",
                           "torchtitan_dec24_llama31_70b_256xH100_2d", "torchtitan_jun25_l8_64xH100_bf16_vanillaTP"}) {
    EXPECT_EQ(find(name).stack.tp_collectives, TpCollectives::exposed) << name;
  }
  for (const char* name : {"torchtitan_llama31_405b_128xH100_float8_asyncTP", "torchtitan_dec24_llama31_70b_256xH100_2d_asynctp",
                           "torchtitan_jun25_l70_256xH100_bf16_asyncTP"}) {
    EXPECT_EQ(find(name).stack.tp_collectives, TpCollectives::overlapped) << name;
  }
  EXPECT_EQ(find("dgxc_llama31_70b_bf16_64xH100").stack.tp_collectives, TpCollectives::overlapped);  // Megatron-Core
}

// fp8, amp_fp8 and torchtitan's float8 linears are the model's precision fp8; bf16 rows stay bf16.
TEST(ValidationCorpus, Fp8RowsAreExpressedInFp8) {
  for (const char* name : {"dgxc_gpt3_175b_fp8_128xH100_v25.02", "torchtitan_llama31_405b_128xH100_float8"}) {
    const CorpusCase& c = find(name);
    ASSERT_TRUE(c.expressed()) << name << ": " << c.why_not;
    EXPECT_EQ(c.model.precision, Precision::fp8) << name;
  }
  EXPECT_EQ(find("dgxc_gpt3_175b_bf16_128xH100_v24.11.1").model.precision, Precision::bf16);
  int fp8 = 0;
  for (const CorpusCase& c : corpus()) fp8 += c.expressed() && c.model.precision == Precision::fp8;
  EXPECT_GT(fp8, 40);
}

// torchtitan's 405B pipeline runs: FSDP2 under PP gathers weights and reduces gradients once per
// iteration (zero = 1 over data × context, after the backward), each rank's local batch split
// into the recipe's 8 pipeline microbatches; the interleaved schedule runs 2 chunks per stage.
TEST(ValidationCorpus, TorchtitanPipelineRowsShardOncePerIteration) {
  const CorpusCase& c = find("torchtitan_dec24_llama31_405b_512xH100_1f1b");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.config.pipeline, 8);
  EXPECT_EQ(c.config.data, 8);
  EXPECT_EQ(c.config.z, 1);
  EXPECT_EQ(c.config.zero, 1);
  EXPECT_EQ(c.config.microbatch, 4);  // local batch 32 over 8 microbatches
  EXPECT_EQ(c.config.interleave, 1);
  EXPECT_EQ(c.stack.grad_reduce, GradReduce::after_backward);
  EXPECT_EQ(find("torchtitan_dec24_llama31_405b_512xH100_interleaved1f1b").config.interleave, 2);
  const CorpusCase& cp = find("torchtitan_dec24_llama31_405b_512xH100_cp2_seq65536");
  ASSERT_TRUE(cp.expressed()) << cp.why_not;
  EXPECT_EQ(cp.config.context, 2);
  EXPECT_EQ(cp.config.data, 4);
  EXPECT_EQ(cp.config.microbatch, 1);  // local batch 8 over 8 microbatches
  EXPECT_EQ(cp.config.zero, 1);
  // FSDP without a pipeline stays AxoNN's Z, reducing under the backward.
  EXPECT_EQ(find("torchtitan_dec24_llama31_8b_8xH100_fsdp").stack.grad_reduce, GradReduce::overlapped);
}

// The Trainy H200 runs ran llama3_8b.toml's selective (per-op) checkpointing (recipes:), and
// gathered their float8 weights in fp8 (their precision cell: "fp8 FSDP all-gather"); the
// other torchtitan float8 rows gather bf16 and cast after the gather.
TEST(ValidationCorpus, TrainyRowsRunTheTomlsCheckpointingAndGatherFp8) {
  const CorpusCase& c = find("torchtitan_trainy_llama31_8b_32xH200_float8");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.config.recompute, Recompute::selective);
  EXPECT_EQ(c.stack.selective, SelectiveKind::per_op);
  EXPECT_EQ(c.stack.fp8_weights, Fp8Weights::gathered);
  EXPECT_EQ(find("torchtitan_dec24_llama31_8b_8xH100_fsdp_compile_float8").stack.fp8_weights, Fp8Weights::transient);
}

// torchtitan's per-layer selective checkpointing (every second block in full) is full recompute
// of half of each stage's layers.
TEST(ValidationCorpus, PerLayerCheckpointingRecomputesHalfTheLayers) {
  const CorpusCase& c = find("torchtitan_llama38b_64xA100_lbs1_selective");
  ASSERT_TRUE(c.expressed()) << c.why_not;
  EXPECT_EQ(c.config.recompute, Recompute::full);
  EXPECT_EQ(c.config.recompute_layers, 16);  // of Llama 3 8B's 32
  EXPECT_EQ(find("torchtitan_llama213b_64xA100_lbs2_selective").config.recompute_layers, 20);  // of 40
  EXPECT_EQ(find("torchtitan_llama38b_64xA100_lbs1_selective_op").config.recompute, Recompute::selective);
}

TEST(ValidationCorpus, EveryRowIsExpressed) {
  for (const CorpusCase& c : corpus()) EXPECT_TRUE(c.expressed()) << c.name << ": " << c.why_not;
}

class CorpusFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("axo_corpus_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "c.yaml") << "corpus: runs.csv\n"
                                      "families:\n  - {match: GPT, mlp: gelu, vocab: 51200}\n"
                                      "machines:\n  - {source: t, gpu_type: A100-80, gpu: A100-80, machine: selene, attention: flash}\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
 public:
  std::string yaml() const { return (dir_ / "c.yaml").string(); }
  void write_csv(const std::string& rows) const {
    std::ofstream(dir_ / "runs.csv")
        << "name,model_family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,global_batch,gpu_type,"
           "gpus,TP,PP,DP,other_parallel,microbatch,recompute,sequence_parallel,precision,iter_time_s,tokens_per_s,"
           "confidence\n"
        << rows;
  }
  // The same with a `source` cell after the name, which recipes: match.
  void write_sourced_csv(const std::string& rows) const {
    std::ofstream(dir_ / "runs.csv")
        << "name,source,model_family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,global_batch,gpu_type,"
           "gpus,TP,PP,DP,other_parallel,microbatch,recompute,sequence_parallel,precision,iter_time_s,tokens_per_s,"
           "confidence\n"
        << rows;
  }
  std::filesystem::path dir_;
};

TEST_F(CorpusFixture, BatchThatIsNotDataTimesMicrobatchTimesStepsIsRefused) {
  write_csv("t_a,GPT x,4,512,8,,2048,,1024,96,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact-from-table\n"
            "t_b,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact-from-table\n"
            "t_c,Other,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact-from-table\n");
  const auto cases = load_corpus(yaml());
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_NE(cases[0].why_not.find("global_batch 96 is not DP·microbatch·GA = 4·2·4"), std::string::npos)
      << cases[0].why_not;
  ASSERT_TRUE(cases[1].expressed()) << cases[1].why_not;
  EXPECT_EQ(cases[1].config.data, 4);
  EXPECT_EQ(cases[1].config.y, 2);
  EXPECT_EQ(cases[1].model.vocab, 51200);
  EXPECT_NE(cases[2].why_not.find("no architecture for model family 'Other'"), std::string::npos);
}

TEST_F(CorpusFixture, MalformedRowsNameTheLine) {
  write_csv("t_a,GPT x,4,512\n");
  try {
    load_corpus(yaml());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("runs.csv:2: expected 23 columns, got 4"), std::string::npos) << e.what();
  }
  write_csv("t_a,GPT x,four,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact-from-table\n");
  try {
    load_corpus(yaml());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("runs.csv:2: column 'layers': expected a whole number from 1 to 2^30, "
                                         "got 'four'"),
              std::string::npos)
        << e.what();
  }
}

// What load_corpus says of the CSV rows `rows` (empty: accepted).
std::string corpus_error(const CorpusFixture& fixture, const std::string& rows) {
  fixture.write_csv(rows);
  try {
    load_corpus(fixture.yaml());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Counts beyond 2^30 (whose products would overflow: DP·microbatch, a 2^62 DP, was a division
// by zero), in a cell or after a tag of other_parallel, and measurements beyond 1e12 or below
// 1e-9 (inf, 1e400) are refused naming the line and the column.
TEST_F(CorpusFixture, OutOfRangeCountsAndMeasurementsAreRefused) {
  const std::string head = "t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,";
  const std::string tail = ",none,no,bf16,";
  EXPECT_NE(corpus_error(*this, head + "4611686018427387904,GA=4,4" + tail + "1.5,,exact\n")
                .find("runs.csv:2: column 'DP': expected a whole number from 1 to 2^30, got '4611686018427387904'"),
            std::string::npos);
  EXPECT_NE(corpus_error(*this, head + "4,VP=99999999999999999999; GA=4,2" + tail + "1.5,,exact\n")
                .find("runs.csv:2: column 'other_parallel': expected a whole number from 1 to 2^30, "
                      "got '99999999999999999999'"),
            std::string::npos);
  for (const char* bad : {"inf", "1e400", "1e-300", "nan"}) {
    EXPECT_NE(corpus_error(*this, head + "4,GA=4,2" + tail + bad + ",,exact\n")
                  .find(std::string("runs.csv:2: column 'iter_time_s': expected a number from 1e-9 to 1e12, got '") +
                        bad + "'"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(corpus_error(*this, head + "4,GA=4,2" + tail + "1.5,,exact\n"), "");
  // Counts within 2^30 whose grid product is beyond any cluster (2^90 would wrap around to 0):
  // the row is not expressed, and says why.
  write_csv("t_a,GPT x,4,512,8,,2048,,1024,1073741824,A100-80,8,1073741824,1073741824,1,CP=1073741824,1,none,no,"
            "bf16,1.5,,exact\n");
  const auto cases = load_corpus(yaml());
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_NE(cases[0].why_not.find("is larger than 10^12 GPUs"), std::string::npos) << cases[0].why_not;
}

// The other_parallel cell's tags in any case and spacing; a value that is no whole number, a tag
// given twice or a degree stated against its column is refused naming the cell, where "VP=12.9"
// read as 12 and "VP=twelve", "CP=abc" or "grad accum abc" as not there.
TEST_F(CorpusFixture, OtherParallelTagsAreWholeNumbersOrNotStated) {
  const std::string head = "t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,\"";
  const std::string tail = "\",2,none,no,bf16,1.5,,exact\n";
  write_csv(head + "vp = 2; GA=4" + tail + "t_b" + (head + "VP=n/a; grad accum 4" + tail).substr(3));
  const auto cases = load_corpus(yaml());
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].config.interleave, 2);
  EXPECT_EQ(cases[1].config.interleave, 1);
  for (const char* bad : {"VP=12.9", "VP=twelve", "VP=-12", "CP=abc", "GA=64.7", "grad accum abc"}) {
    EXPECT_NE(corpus_error(*this, head + bad + tail).find("runs.csv:2: column 'other_parallel': expected a whole number"),
              std::string::npos)
        << bad << ": " << corpus_error(*this, head + bad + tail);
  }
  EXPECT_NE(corpus_error(*this, head + "CP=1; CP=2" + tail).find("column 'other_parallel': CP given twice"),
            std::string::npos);
  EXPECT_NE(corpus_error(*this, head + "CP=1; TP=8; PP=2" + tail)
                .find("runs.csv:2: column 'other_parallel': TP=8 where column 'TP' says 2"),
            std::string::npos);
  EXPECT_EQ(corpus_error(*this, head + "TP=2 PP=1; overlap_grad_sync" + tail), "");
}

// A row without a name has no source; a name given twice would count its run twice.
TEST_F(CorpusFixture, RowsAreNamedOnce) {
  const std::string row = ",GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact\n";
  EXPECT_NE(corpus_error(*this, row).find("runs.csv:2: column 'name': empty"), std::string::npos);
  EXPECT_NE(corpus_error(*this, "t_a" + row + "t_b" + row + "t_a" + row)
                .find("runs.csv:4: row 't_a': named twice (first at " + (dir_ / "runs.csv").string() + ":2)"),
            std::string::npos);
  EXPECT_EQ(corpus_error(*this, "t_a" + row + "t_b" + row), "");
}

// Errors name the file's own line: a blank line and a quoted cell over two lines come before it.
TEST_F(CorpusFixture, ErrorsNameThePhysicalLine) {
  const std::string good = "t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact\n";
  const std::string quoted = "t_b,\"GPT\nx\",4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact\n";
  EXPECT_NE(corpus_error(*this, good + "\n" + quoted + "t_c,GPT x,4\n").find("runs.csv:6: expected 23 columns, got 3"),
            std::string::npos)
      << corpus_error(*this, good + "\n" + quoted + "t_c,GPT x,4\n");
  EXPECT_NE(corpus_error(*this, good + "\n" + quoted + "t_c,GPT x,four" + good.substr(good.find(",512")))
                .find("runs.csv:6: column 'layers'"),
            std::string::npos);
  // The last line without its newline, and CRLF line ends.
  std::string last = "t_c,GPT x,four" + good.substr(good.find(",512"));
  last.pop_back();
  EXPECT_NE(corpus_error(*this, good + last).find("runs.csv:3: column 'layers'"), std::string::npos)
      << corpus_error(*this, good + last);
  std::string crlf = good;
  crlf.insert(crlf.size() - 1, "\r");
  EXPECT_NE(corpus_error(*this, crlf + crlf + last + "\r\n").find("runs.csv:4: column 'layers'"), std::string::npos)
      << corpus_error(*this, crlf + crlf + last + "\r\n");
}

// A recipe entry fills only the cells a row leaves "not stated"; a row's own statement is kept.
TEST_F(CorpusFixture, RecipeFillsOnlyCellsNotStated) {
  std::ofstream(dir_ / "c.yaml", std::ios::app)
      << "recipes:\n  - {source_contains: recipe-x, recompute: selective, sequence_parallel: \"yes\"}\n";
  write_sourced_csv(
      "t_a,recipe-x,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,not stated,not stated,bf16,1.5,,exact\n"
      "t_b,recipe-x,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,full,no,bf16,1.5,,exact\n"
      "t_c,other,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,not stated,no,bf16,1.5,,exact\n");
  const auto cases = load_corpus(yaml());
  ASSERT_EQ(cases.size(), 3u);
  ASSERT_TRUE(cases[0].expressed()) << cases[0].why_not;
  EXPECT_EQ(cases[0].config.recompute, Recompute::selective);
  EXPECT_TRUE(cases[0].config.sequence_parallel);
  ASSERT_TRUE(cases[1].expressed()) << cases[1].why_not;
  EXPECT_EQ(cases[1].config.recompute, Recompute::full);
  EXPECT_FALSE(cases[1].config.sequence_parallel);
  EXPECT_NE(cases[2].why_not.find("recompute not stated"), std::string::npos) << cases[2].why_not;
}

// A torchtitan pipeline row is expressed only with the recipe's pipeline microbatches, and only
// when its local batch divides into them.
TEST_F(CorpusFixture, TorchtitanPipelineNeedsTheRecipesMicrobatches) {
  std::ofstream(dir_ / "c.yaml", std::ios::app)
      << "  - {source: torchtitan, gpu_type: A100-80, gpu: A100-80, machine: selene, attention: flash}\n"
         "recipes:\n  - {source_contains: recipe-x, pipeline_microbatches: 4}\n";
  write_sourced_csv(
      "torchtitan_a,recipe-x,GPT x,4,512,8,,2048,,1024,64,A100-80,16,2,2,4,FSDP2 over DP,16,full,,bf16,1.5,,exact\n"
      "torchtitan_b,other,GPT x,4,512,8,,2048,,1024,64,A100-80,16,2,2,4,FSDP2 over DP,16,full,,bf16,1.5,,exact\n"
      "torchtitan_c,recipe-x,GPT x,4,512,8,,2048,,1024,24,A100-80,16,2,2,4,FSDP2 over DP,6,full,,bf16,1.5,,exact\n"
      // Without FSDP the local batch splits the same way; per-layer checkpointing recomputes half a chunk.
      "torchtitan_d,recipe-x,GPT x,4,512,8,,2048,,1024,64,A100-80,16,2,2,4,TP=2 PP=2,16,selective (per-layer),,bf16,"
      "1.5,,exact\n"
      "torchtitan_interleaved,recipe-x,GPT x,4,512,8,,2048,,1024,64,A100-80,16,2,2,4,TP=2 PP=2,16,"
      "selective (per-layer),,bf16,1.5,,exact\n");
  const auto cases = load_corpus(yaml());
  ASSERT_EQ(cases.size(), 5u);
  ASSERT_TRUE(cases[3].expressed()) << cases[3].why_not;
  EXPECT_EQ(cases[3].config.microbatch, 4);
  EXPECT_EQ(cases[3].config.zero, 0);
  EXPECT_EQ(cases[3].config.recompute, Recompute::full);
  EXPECT_EQ(cases[3].config.recompute_layers, 1);  // of each stage's 2 layers
  // Interleaved: chunks of one layer, of which every second one holds none.
  EXPECT_NE(cases[4].why_not.find("a chunk of 1 layer holds none"), std::string::npos) << cases[4].why_not;
  ASSERT_TRUE(cases[0].expressed()) << cases[0].why_not;
  EXPECT_EQ(cases[0].config.microbatch, 4);
  EXPECT_EQ(cases[0].config.zero, 1);
  EXPECT_NE(cases[1].why_not.find("microbatches the row does not state"), std::string::npos) << cases[1].why_not;
  EXPECT_NE(cases[2].why_not.find("local batch of 6 sequences does not divide into 4 pipeline microbatches"),
            std::string::npos)
      << cases[2].why_not;
}

// A recipe's attention kernel that axo does not know is refused with the file, line and field.
TEST_F(CorpusFixture, UnknownRecipeAttentionNamesTheField) {
  std::ofstream(dir_ / "c.yaml", std::ios::app) << "recipes:\n  - {source_contains: recipe-x, attention: flash9}\n";
  write_csv("");
  try {
    load_corpus(yaml());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("c.yaml:"), std::string::npos) << message;
    EXPECT_NE(message.find("field 'attention'"), std::string::npos) << message;
    EXPECT_NE(message.find("flash9"), std::string::npos) << message;
  }
}

// Cells in words the translation does not read are not priced as its defaults (bf16, no
// recompute, no sequence parallelism): the row says which cell and what it said.
TEST_F(CorpusFixture, UnreadCellsAreNotExpressed) {
  const std::string head = "t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,";
  write_csv(head + "none,no,fp32,1.5,,exact\n" + "t_b" + head.substr(3) + "banana,no,bf16,1.5,,exact\n" + "t_c" +
            head.substr(3) + "none,maybe,bf16,1.5,,exact\n" + "t_d" + head.substr(3) + "none,,bf16,1.5,,exact\n" +
            "t_e" + head.substr(3) + "full (every layer),yes,amp_bf16,1.5,,exact\n");
  const auto cases = load_corpus(yaml());
  ASSERT_EQ(cases.size(), 5u);
  EXPECT_EQ(cases[0].why_not, "precision 'fp32' names none of bf16, fp8 and float8, the precisions the corpus prices");
  EXPECT_EQ(cases[1].why_not, "recompute 'banana' starts with none of none, selective and full");
  EXPECT_EQ(cases[2].why_not, "sequence_parallel 'maybe' is none of yes, no, n/a and not stated");
  EXPECT_EQ(cases[3].why_not, "sequence_parallel '' is none of yes, no, n/a and not stated");
  ASSERT_TRUE(cases[4].expressed()) << cases[4].why_not;
  EXPECT_EQ(cases[4].config.recompute, Recompute::full);
  EXPECT_TRUE(cases[4].config.sequence_parallel);
}

// A row's GPUs per server must be its machine's (selene: 8); an empty cell leaves it to the preset.
TEST_F(CorpusFixture, GpusPerNodeMustBeTheMachines) {
  std::ofstream(dir_ / "runs.csv")
      << "name,model_family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,global_batch,gpu_type,"
         "gpus,gpus_per_node,TP,PP,DP,other_parallel,microbatch,recompute,sequence_parallel,precision,iter_time_s,"
         "tokens_per_s,confidence\n"
         "t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,4,2,1,4,GA=4,2,none,no,bf16,1.5,,exact\n"
         "t_b,GPT x,4,512,8,,2048,,1024,32,A100-80,8,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact\n"
         "t_c,GPT x,4,512,8,,2048,,1024,32,A100-80,8,,2,1,4,GA=4,2,none,no,bf16,1.5,,exact\n";
  const auto cases = load_corpus(yaml());
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].why_not, "gpus_per_node 4 is not the 8 GPUs per server of machine selene");
  EXPECT_TRUE(cases[1].expressed()) << cases[1].why_not;
  EXPECT_TRUE(cases[2].expressed()) << cases[2].why_not;
}

// A row giving both its iteration time and its tokens/s must give one run's: 32 x 1024 tokens in
// 1.5 s are 21845 tokens/s.
TEST_F(CorpusFixture, IterationTimeAndTokensPerSecondMustAgree) {
  const std::string head = "t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,";
  EXPECT_EQ(corpus_error(*this, head + "1.5,21845,exact\n"), "");
  EXPECT_NE(corpus_error(*this, head + "1.5,21845000000,exact\n")
                .find("runs.csv:2: iter_time_s 1.5 and global_batch x seq_len / tokens_per_s = 1.50002e-06 s "
                      "disagree by -100.0%"),
            std::string::npos)
      << corpus_error(*this, head + "1.5,21845000000,exact\n");
  EXPECT_NE(corpus_error(*this, head + "1.5,20000,exact\n").find("disagree by +9.2%"), std::string::npos);
}

// A table without runs, a column every row is read by missing from the header, and a model family's
// field a model spec would refuse are named where they are.
TEST_F(CorpusFixture, TheTableAndTheFamiliesAreCheckedWhereTheyAre) {
  EXPECT_NE(corpus_error(*this, "").find("runs.csv: no runs below the header line"), std::string::npos);
  std::ofstream(dir_ / "runs.csv") << "name,model_family\nt_a,GPT x\n";
  EXPECT_NE(testing::input_error_of([&] { load_corpus(yaml()); }).find("runs.csv:1: no column 'layers' in the header"),
            std::string::npos);
  std::ofstream(dir_ / "c.yaml") << "corpus: runs.csv\n"
                                    "families:\n  - {match: GPT, mlp: relu9}\n"
                                    "machines:\n  - {source: t, gpu_type: A100-80, gpu: A100-80, machine: selene, "
                                    "attention: flash}\n";
  try {
    load_corpus(yaml());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.yaml:3:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("field 'mlp'"), std::string::npos) << e.what();
  }
  // A table that is not there is named where the description names it.
  std::ofstream(dir_ / "c.yaml") << "corpus: absent.csv\nfamilies: []\nmachines: []\n";
  EXPECT_NE(testing::input_error_of([&] { load_corpus(yaml()); })
                .find("c.yaml:1:9: field 'corpus': " + (dir_ / "absent.csv").string() + " does not exist"),
            std::string::npos)
      << testing::input_error_of([&] { load_corpus(yaml()); });
}

// A machine entry's GPU type is its preset's: another would group and band its runs as another GPU's.
TEST_F(CorpusFixture, MachineEntryGpuIsThePresetsGpuType) {
  std::ofstream(dir_ / "c.yaml") << "corpus: runs.csv\n"
                                    "families:\n  - {match: GPT, mlp: gelu, vocab: 51200}\n"
                                    "machines:\n  - {source: t, gpu_type: A100-80, gpu: H100-XX, machine: selene, attention: flash}\n";
  write_csv("t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,none,no,bf16,1.5,,exact\n");
  try {
    load_corpus(yaml());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.yaml:5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("field 'gpu': 'H100-XX' is not machine selene's GPU type, 'A100-80'"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir_ / "c.yaml") << "corpus: runs.csv\n"
                                    "families:\n  - {match: GPT, mlp: gelu, vocab: 51200}\n"
                                    "machines:\n  - {source: t, gpu_type: A100-80, gpu: A100-80, machine: nosuch, attention: flash}\n";
  try {
    load_corpus(yaml());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.yaml:5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("field 'machine': 'nosuch' is neither a file nor a machine preset"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace axo
