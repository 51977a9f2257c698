// `axo plan --emit`: exports on stdout or in a file, --rank, the plan file
// the Slurm script runs, and the errors for what a framework cannot express.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "model/plan_file.h"
#include "tests/run_command.h"

namespace {

namespace fs = std::filesystem;

using Result = axo::testing::CommandResult;

// Runs axo; `redirect` says what happens to stderr ("2>&1" merges it).
Result axo(const std::string& arguments, const std::string& redirect = "2>&1") {
  return axo::testing::run_axo(arguments, redirect);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A configuration Megatron-LM, torchtitan and Slurm can all run (no replicas: torchtitan's DDP
// runs only over every rank, export_torchtitan.cc).
const std::string kPlan =
    "plan --model gpt3-13b --gpus 16 --machine selene "
    "--fix pipeline=2,data=1,x=1,y=8,z=1,microbatch=2,recompute=full,offload=off,zero=0,overlap=on,"
    "sequence_parallel=on,interleave=1,order=xyzdp";

class Emit : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("axo_emit_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(Emit, StdoutHoldsOnlyTheExport) {
  const Result r = axo(kPlan + " --emit megatron", "2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("# Megatron-LM arguments for gpt3-13b on 16 GPUs of selene", 0), 0u)
      << r.output;
  EXPECT_NE(r.output.find("  --tensor-model-parallel-size 8\n"), std::string::npos);
  EXPECT_NE(r.output.find("  --pipeline-model-parallel-size 2\n"), std::string::npos);
  EXPECT_NE(r.output.find("  --sequence-parallel\n"), std::string::npos);
  EXPECT_NE(r.output.find("  --recompute-granularity full\n"), std::string::npos);
  EXPECT_EQ(r.output.find("iter_s"), std::string::npos) << "the table belongs on stderr";
  const Result all = axo(kPlan + " --emit megatron");
  EXPECT_NE(all.output.find("iter_s"), std::string::npos);
}

TEST_F(Emit, EmitOutWritesTheSameTextAndTheTableStays) {
  const Result r = axo(kPlan + " --emit torchtitan --emit-out " + path("titan.toml"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("iter_s"), std::string::npos);
  EXPECT_NE(r.output.find("Wrote the torchtitan export of configuration 1 to " + path("titan.toml")),
            std::string::npos)
      << r.output;
  const Result stdout_only = axo(kPlan + " --emit torchtitan", "2>/dev/null");
  EXPECT_EQ(read_text(path("titan.toml")), stdout_only.output);
  EXPECT_NE(stdout_only.output.find("tensor_parallel_degree = 8\n"), std::string::npos);
}

TEST_F(Emit, SlurmScriptRunsTheRankedPlanWrittenBesideIt) {
  const std::string base = "plan --model gpt3-13b --gpus 16 --machine selene --top 5";
  ASSERT_EQ(axo(base + " --out " + path("best.yaml")).code, 0);
  ASSERT_EQ(axo(base + " --rank 2 --out " + path("second.yaml")).code, 0);
  const Result r = axo(base + " --rank 2 --emit slurm --emit-out " + path("job.sbatch"));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string script = read_text(path("job.sbatch"));
  EXPECT_NE(script.find("#SBATCH --nodes=2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --ntasks-per-node=8\n"), std::string::npos) << script;
  EXPECT_NE(script.find("Configuration 2 of the ranked table"), std::string::npos) << script;
  EXPECT_NE(script.find("train --plan " + path("job.plan.yaml") + " --data"), std::string::npos)
      << script;
  const axo::Plan written = axo::read_plan_file(path("job.plan.yaml"));
  EXPECT_EQ(written.config, axo::read_plan_file(path("second.yaml")).config);
  EXPECT_FALSE(written.config == axo::read_plan_file(path("best.yaml")).config);
}

// A script written to --emit-out gets its plan beside it, so no note asks for --out; on
// stdout without --out nothing writes the plan, and the note says how.
TEST_F(Emit, SlurmNoteOnlyWhenNothingWroteThePlan) {
  fs::create_directories(path("sl2"));
  Result r = axo(kPlan + " --emit slurm --emit-out " + path("sl2/run.sbatch"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("sl2/run.plan.yaml")));
  EXPECT_NE(r.output.find("Wrote the best configuration to " + path("sl2/run.plan.yaml")), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("write it with --out"), std::string::npos) << r.output;
  r = axo(kPlan + " --emit slurm", "2>&1 >/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("The script runs plan.yaml: write it with --out plan.yaml"), std::string::npos) << r.output;
}

// Two scripts in one folder keep their own plans (job.sbatch: job.plan.yaml), each named by
// its absolute path: the job finds it from whichever folder it is submitted.
TEST_F(Emit, SlurmScriptsKeepTheirOwnPlansByAbsolutePath) {
  fs::create_directories(path("sl3"));
  const std::string in_dir = "cd " + dir_.string() + " && " + AXO_BINARY +
                             " plan --machine dgx-h100 --top 1 --emit slurm --emit-out sl3/";
  ASSERT_EQ(axo::testing::run_command(in_dir + "a.sbatch --model gpt2-124m --gpus 16 2>&1").code, 0);
  ASSERT_EQ(axo::testing::run_command(in_dir + "b.sbatch --model gpt2-355m --gpus 8 2>&1").code, 0);
  for (const auto& [script, gpus] : {std::pair{"a", 16}, {"b", 8}}) {
    // As the job sees it: the folder's physical path (a temporary folder may be reached by a link).
    const std::string plan = (fs::canonical(dir_) / "sl3" / (std::string(script) + ".plan.yaml")).string();
    EXPECT_NE(read_text(path("sl3/" + std::string(script) + ".sbatch")).find("train --plan " + plan + " --data"),
              std::string::npos) << script;
    EXPECT_EQ(axo::read_plan_file(plan).gpus, gpus) << script;
  }
}

// llama3-8b's 32 layers divide into 2 x 4 chunks, but axo splits them 5+4+4+4,4+4+4+3
// (its LM head weighs as much as 1.8 layers): Megatron's equal virtual stages would not
// be the plan axo priced, so the export writes Megatron-Core's layout of axo's chunks.
TEST_F(Emit, MegatronWritesAxosUnequalInterleavedSplitAsALayout) {
  const Result r = axo(
      "plan --model llama3-8b --gpus 16 --machine dgx-h100 --fix pipeline=2,data=8,context=1,x=1,y=1,z=1,"
      "microbatch=1,recompute=none,recompute_layers=0,offload=off,zero=1,overlap=on,sequence_parallel=off,"
      "interleave=4,order=xyzcpd --emit megatron");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("MEGATRON_ARGS"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--pipeline-model-parallel-layout \"Et*5|t*4|t*4|t*4|t*4|t*4|t*4|t*3L\""),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("--num-layers-per-virtual-pipeline-stage"), std::string::npos) << r.output;
}

// fp8 llama3-8b: the best plans shard the optimizer (zero > 0), which torchtitan cannot;
// its nearest plan (zero held at 0) exists and exports.
TEST_F(Emit, TorchtitanFindsANearestFp8Plan) {
  const Result r = axo("plan --model llama3-8b --gpus 16 --machine dgx-h100 --precision fp8 --emit torchtitan");
  EXPECT_EQ(r.output.find("No configuration it can express"), std::string::npos) << r.output;
  EXPECT_EQ(r.code, 2) << r.output;  // the best plan shards the optimizer
  EXPECT_NE(r.output.find("so zero=2 has no counterpart"), std::string::npos) << r.output;
  const size_t fix = r.output.find("\n  --fix ");
  ASSERT_NE(fix, std::string::npos) << r.output;
  const std::string nearest = r.output.substr(fix + 9, r.output.find('\n', fix + 1) - fix - 9);
  EXPECT_NE(nearest.find("zero=0"), std::string::npos) << nearest;
  const Result again = axo("plan --model llama3-8b --gpus 16 --machine dgx-h100 --precision fp8 --fix " + nearest +
                           " --emit torchtitan", "2>/dev/null");
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("converters = [\"quantize.linear.float8\"]"), std::string::npos) << again.output;
}

TEST_F(Emit, AxonnExportsTheFourDimensionalGrid) {
  const Result r = axo("plan --model gpt3-13b --gpus 32 --machine selene "
                       "--fix pipeline=1,data=2,x=2,y=2,z=4,zero=0,order=xyzpd --emit axonn",  // AxoNN has no zero
                       "2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("ax.init(G_inter=1, G_data=2, G_intra_r=2, G_intra_c=2, G_intra_d=4, "
                          "gpus_per_node=8)"),
            std::string::npos)
      << r.output;
}

// A --fix value the framework cannot run (a rank order, fp8 tensor parallelism for torchtitan) is
// changed in the nearest plan, and named: the search within the user's values finds none.
TEST_F(Emit, TheNearestPlanChangesAFixedValueTheFrameworkCannotRun) {
  Result r = axo("plan --model gpt3-13b --gpus 64 --machine selene --fix y=8,data=8,order=dpcxyz --emit megatron");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("It changes your --fix order=dpcxyz to order=xyzcdp (what Megatron-LM needs)."),
            std::string::npos)
      << r.output;
  r = axo("plan --model llama3-8b --gpus 64 --machine dgx-h100 --precision fp8 --fix y=8 --emit torchtitan");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("It changes your --fix y=8 to y=1 (what torchtitan needs)."), std::string::npos) << r.output;
}

TEST_F(Emit, MegatronRefusesA4DPlanAndShowsTheNearest) {
  const Result r = axo("plan --model gpt3-13b --gpus 32 --machine selene --fix x=2,z=2 "
                       "--emit megatron");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("Megatron-LM cannot run this plan"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("needs x=1 and z=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("The nearest plan Megatron-LM can express"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(",x=1,y="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("s per iteration, against"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("It changes your --fix x=2,z=2 to x=1,z=1 (what Megatron-LM needs)."), std::string::npos)
      << r.output;
  // What it can run of the --fix stays: it offloads with its distributed optimizer (zero=1), where
  // the nearest plan had turned offload off.
  const Result offload = axo("plan --model gpt3-13b --gpus 64 --machine selene --top 1 --fix offload=on --emit megatron");
  EXPECT_EQ(offload.code, 2) << offload.output;
  EXPECT_NE(offload.output.find(",offload=on,zero=1,"), std::string::npos) << offload.output;
  EXPECT_EQ(offload.output.find("It changes your --fix"), std::string::npos) << offload.output;
}

// stdout holds the ds_config JSON alone; the Megatron-DeepSpeed arguments go to
// stderr, or beside --emit-out as <file>.args.sh.
TEST_F(Emit, DeepspeedWritesTheJsonAndItsArguments) {
  const Result r = axo(kPlan + " --emit deepspeed", "2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json json = nlohmann::json::parse(r.output);
  EXPECT_EQ(json["train_micro_batch_size_per_gpu"], 2);
  EXPECT_EQ(json["gradient_accumulation_steps"], 1024 / (2 * 1));
  EXPECT_EQ(json["zero_optimization"]["stage"], 0);
  const Result file = axo(kPlan + " --emit deepspeed --emit-out " + path("ds_config.json"));
  ASSERT_EQ(file.code, 0) << file.output;
  EXPECT_EQ(read_text(path("ds_config.json")), r.output);
  const std::string arguments = read_text(path("ds_config.json.args.sh"));
  EXPECT_NE(arguments.find("  --pipeline-model-parallel-size 2\n"), std::string::npos) << arguments;
  EXPECT_NE(arguments.find("  --tensor-model-parallel-size 8\n"), std::string::npos) << arguments;
  EXPECT_NE(arguments.find("  --deepspeed_config " + path("ds_config.json") + "\n"), std::string::npos)
      << arguments;
}

// A 4D grid: refused with the nearest plan DeepSpeed runs (x = z = 1); zero=2
// fixed with a pipeline: PipelineEngine takes ZeRO 0 or 1, so nothing is near.
TEST_F(Emit, DeepspeedRefusesWhatItCannotRun) {
  Result r = axo("plan --model gpt3-13b --gpus 32 --machine selene --fix x=2,z=2 --emit deepspeed");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("DeepSpeed (Megatron-DeepSpeed) cannot run this plan"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("The nearest plan DeepSpeed (Megatron-DeepSpeed) can express"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",x=1,y="), std::string::npos) << r.output;
  r = axo("plan --model gpt3-13b --gpus 64 --machine selene --fix pipeline=2,zero=2 --emit deepspeed");
  EXPECT_EQ(r.code, 2) << r.output;
  // The message names the user's --fix, which rules the nearest plans out, not the GPUs' memory.
  EXPECT_NE(r.output.find("No configuration it can express holds --fix pipeline=2,zero=2 and fits gpt3-13b on 64 GPUs"),
            std::string::npos)
      << r.output;
}

TEST_F(Emit, UsageErrorsExitTwo) {
  Result r = axo(kPlan + " --emit colossalai");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("unknown format 'colossalai'"), std::string::npos) << r.output;
  r = axo(kPlan + " --emit-out " + path("x.sh"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--emit-out needs --emit"), std::string::npos) << r.output;
  r = axo(kPlan + " --rank 2 --emit megatron");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--rank 2: only 1 configuration of gpt3-13b on 16 GPUs fits"),
            std::string::npos)
      << r.output;
  r = axo(kPlan + " --rank 0");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(fs::exists(path("x.sh")));
}

// --precision fp8 on an H100: Megatron's Transformer Engine fp8 flags,
// torchtitan's float8 converter, AxoNN refused (no fp8 GEMMs); plan.yaml keeps the precision.
TEST_F(Emit, Fp8PlansExportTheirFp8Settings) {
  const std::string plan =
      "plan --model gpt3-13b --gpus 16 --machine dgx-h100 --precision fp8 "
      "--fix pipeline=2,data=1,x=1,y=8,z=1,microbatch=2,recompute=full,offload=off,zero=0,overlap=on,"
      "sequence_parallel=on,interleave=1,order=xyzdp";
  const Result megatron = axo(plan + " --emit megatron --out " + path("plan.yaml"), "2>/dev/null");
  ASSERT_EQ(megatron.code, 0) << megatron.output;
  for (const char* flag : {"--bf16", "--fp8-format hybrid", "--fp8-amax-history-len 1024", "--fp8-amax-compute-algo max"}) {
    EXPECT_NE(megatron.output.find(flag), std::string::npos) << flag << "\n" << megatron.output;
  }
  EXPECT_EQ(axo::read_plan_file(path("plan.yaml")).model.precision, axo::Precision::fp8);
  // torchtitan v0.2.2's float8 tensor parallelism is off: y=8 is refused, the FSDP plan exports.
  const Result tensor_parallel = axo(plan + " --emit torchtitan");
  EXPECT_EQ(tensor_parallel.code, 2) << tensor_parallel.output;
  EXPECT_NE(tensor_parallel.output.find("float8 tensor parallelism is off at v0.2.2"), std::string::npos)
      << tensor_parallel.output;
  std::string fsdp_plan = plan;
  fsdp_plan.replace(fsdp_plan.find("y=8,z=1,microbatch=2"), 20, "y=1,z=8,microbatch=8");
  fsdp_plan.replace(fsdp_plan.find("sequence_parallel=on"), 20, "sequence_parallel=off");
  const Result titan = axo(fsdp_plan + " --emit torchtitan", "2>/dev/null");
  ASSERT_EQ(titan.code, 0) << titan.output;
  // torchtitan v0.2.2: the converter registered as quantize.linear.float8, its section of that name.
  for (const char* key : {"converters = [\"quantize.linear.float8\"]", "\n[quantize.linear.float8]\n",
                          "recipe_name = \"tensorwise\"", "filter_fqns = [\"output\"]",
                          "mixed_precision_param = \"bfloat16\""}) {
    EXPECT_NE(titan.output.find(key), std::string::npos) << key << "\n" << titan.output;
  }
  EXPECT_EQ(titan.output.find("enable_fsdp_float8_all_gather"), std::string::npos);  // dgx-h100: fp8_weights cached, not gathered
  std::string axonn_plan = plan;  // AxoNN has no sequence parallelism
  axonn_plan.replace(axonn_plan.find("sequence_parallel=on"), 20, "sequence_parallel=off");
  const Result axonn = axo(axonn_plan + " --emit axonn");
  EXPECT_EQ(axonn.code, 2) << axonn.output;
  EXPECT_NE(axonn.output.find("AxoNN does not train in fp8"), std::string::npos) << axonn.output;
  // torchtitan in fp16: the precision is named, not the memory or another setting of the plan.
  const Result fp16 = axo("plan --model gpt2-124m --gpus 8 --machine dgx-h100 --precision fp16 --emit torchtitan");
  EXPECT_EQ(fp16.code, 2) << fp16.output;
  EXPECT_NE(fp16.output.find("torchtitan does not train in fp16"), std::string::npos) << fp16.output;
}

}  // namespace
