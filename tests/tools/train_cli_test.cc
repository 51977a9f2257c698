// `axo data encode` and `axo train` end to end: shards, logs, run.json,
// checkpoints and resume, and clear errors with exit code 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/presets.h"
#include "tests/file_text.h"
#include "tests/run_command.h"
#include "tests/tools/encoded_text_fixture.h"

namespace {

namespace fs = std::filesystem;

using Result = axo::testing::CommandResult;

Result axo(const std::string& arguments) { return axo::testing::run_axo(arguments); }

class TrainCli : public axo::testing::EncodedTextTest {
 protected:
  TrainCli() : EncodedTextTest("axo_train_cli") {}
};

TEST_F(TrainCli, EncodesTrainsAndWritesRunJson) {
  EXPECT_TRUE(fs::exists(path("lit_train_000000.bin")));
  EXPECT_TRUE(fs::exists(path("lit_val_000000.bin")));
  const Result r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --val-data '" +
                       path("lit_val_*.bin") + "' --steps 12 --batch 4 --microbatch 2 --seq 32 --val-every 6 --run " +
                       path("run.json") + " --save-model " + path("model.bin"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("step    12/12 | loss"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| val "), std::string::npos) << r.output;
  std::ifstream in(path("run.json"));
  const nlohmann::json run = nlohmann::json::parse(in);
  ASSERT_EQ(run["steps"].size(), 12u);
  const auto& step = run["steps"][0];
  for (const char* op : {"gemm", "attention", "layernorm", "gelu", "embedding", "loss", "optimizer"}) {
    EXPECT_TRUE(step["ops_s"].contains(op)) << op;
  }
  for (const char* component : {"compute", "tp_comm", "bubble", "pp_comm", "dp_comm", "offload", "optimizer"}) {
    EXPECT_TRUE(step["components_s"].contains(component)) << component;
  }
  EXPECT_GT(step["iteration_s"].get<double>(), 0);
  // The saved llm.c model starts another run.
  const Result again = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") +
                           "' --steps 2 --batch 2 --microbatch 2 --seq 32 --init-from " + path("model.bin"));
  EXPECT_EQ(again.code, 0) << again.output;
}

// Inf or NaN gradients without loss scaling stop training before the update: the checkpoint of
// step 2 stays the newest, and a resumed run (without the fault) goes on from it.
TEST_F(TrainCli, NonFiniteGradientsStopBeforeTheUpdate) {
  const std::string common = "train --model gpt2-tiny --data '" + path("lit_train_*.bin") +
                             "' --steps 4 --batch 2 --microbatch 2 --seq 32 --checkpoint-dir " + path("halted") +
                             " --checkpoint-every 2";
  // A fault that cannot fire is refused, not a run that passes without it.
  for (const char* fault : {"overflow:1:3", "kill:0:5"}) {
    const Result never = axo(common + " --inject-fault " + fault);
    EXPECT_EQ(never.code, 2) << never.output;
    EXPECT_NE(never.output.find(std::string("--inject-fault ") + fault + " cannot fire: this run has ranks 0..0 and runs to step 4"),
              std::string::npos) << never.output;
  }
  const Result stopped = axo(common + " --stop-after 2 --inject-fault kill:0:3");
  EXPECT_EQ(stopped.code, 2) << stopped.output;
  EXPECT_NE(stopped.output.find("cannot fire: this run has ranks 0..0 and runs to step 2"), std::string::npos) << stopped.output;
  Result r = axo(common + " --inject-fault overflow:0:3");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("step 3: the gradients' norm is inf"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("training stops before the update"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(path("halted/step_00000002.axockpt")));
  EXPECT_FALSE(fs::exists(path("halted/step_00000004.axockpt")));
  r = axo(common + " --resume");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("resuming from step 2"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("loss nan"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("step     4/4 | loss "), std::string::npos) << r.output;
}

TEST_F(TrainCli, CheckpointThenResume) {
  const std::string common = "train --model gpt2-tiny --data '" + path("lit_train_*.bin") +
                             "' --steps 8 --batch 2 --microbatch 2 --seq 32 --checkpoint-dir " + path("ck") +
                             " --checkpoint-every 2";
  Result r = axo(common + " --stop-after 4 --save-model " + path("stopped.bin"));
  ASSERT_EQ(r.code, 0) << r.output;
  // Options that shape the steps cannot change on resume: the curve would depart from the run's.
  r = axo(common + " --resume --lr 0.01");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--lr 0.01: " + path("ck") + "/step_00000004.axockpt was trained with --lr 0.0003"),
            std::string::npos) << r.output;
  r = axo(common + " --resume --lr-schedule constant");
  EXPECT_NE(r.output.find("--lr-schedule constant: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("was trained with --lr-schedule cosine"), std::string::npos) << r.output;
  r = axo("train --model gpt2-tiny --data '" + path("lit_val_*.bin") +
          "' --steps 8 --batch 2 --microbatch 2 --seq 32 --checkpoint-dir " + path("ck") + " --checkpoint-every 2 --resume");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("a resumed run reads the same data"), std::string::npos) << r.output;
  r = axo(common + " --resume --stop-after 6 --init-from " + path("stopped.bin"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("resuming from step 4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note: --init-from " + path("stopped.bin") + " is not used: the checkpoint's weights are"),
            std::string::npos) << r.output;
  r = axo(common + " --resume");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("resuming from step 6"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("note: --init-from"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("step     1/8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("step     8/8"), std::string::npos) << r.output;
}

// A writer killed before its first checkpoint leaves a partly written one: resuming removes it
// though no checkpoint is there to resume from.
TEST_F(TrainCli, ResumingWithoutACheckpointRemovesAPartlyWrittenOne) {
  fs::create_directories(path("ck0"));
  std::ofstream(path("ck0/step_00000001.axockpt.tmp.12345")) << "half";
  const Result r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") +
                       "' --steps 1 --batch 2 --microbatch 2 --seq 32 --checkpoint-dir " + path("ck0") +
                       " --checkpoint-every 2 --resume");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("removed 1 partly written checkpoint(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no checkpoint in " + path("ck0") + ": starting from step 0"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("ck0/step_00000001.axockpt.tmp.12345")));
}

TEST_F(TrainCli, LearningRateOptionsLossDigitsAndModelBesidePlan) {
  const std::string data = " --data '" + path("lit_train_*.bin") + "' --steps 3 --batch 2 --microbatch 2 --seq 32";
  // --lr 0: evaluation only; the loss is printed with 6 decimals, as llm.c does.
  Result r = axo("train --model gpt2-tiny" + data + " --lr 0 --lr-schedule constant --run " + path("lr0.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("lr 0.00e+00"), std::string::npos) << r.output;
  const size_t at = r.output.find("| loss ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string loss = r.output.substr(at + 7, r.output.find(' ', at + 7) - at - 7);
  ASSERT_NE(loss.find('.'), std::string::npos) << loss;
  EXPECT_EQ(loss.size() - loss.find('.') - 1, 6u) << loss;
  std::ifstream in(path("lr0.json"));
  const nlohmann::json run = nlohmann::json::parse(in);
  for (const auto& step : run["steps"]) EXPECT_EQ(step["lr"].get<double>(), 0);
  r = axo("train --model gpt2-tiny" + data + " --lr-schedule step");
  EXPECT_EQ(r.code, 2) << r.output;
  // --model beside --plan: the plan's own model is accepted, another refused naming both.
  ASSERT_EQ(axo("plan --model gpt2-tiny --gpus 1 --machine selene --out " + path("plan.yaml")).code, 0);
  r = axo("train --plan " + path("plan.yaml") + " --model gpt2-tiny" + data);
  EXPECT_EQ(r.code, 0) << r.output;
  r = axo("train --plan " + path("plan.yaml") + " --model gpt2-mini" + data);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--model gpt2-mini is gpt2-mini"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("plans gpt2-tiny"), std::string::npos) << r.output;
  // A plan made with --seq and --batch is still of --model gpt2-tiny; a spec without seq_len or
  // global_batch takes the plan's, and alone --seq and --batch.
  ASSERT_EQ(axo("plan --model gpt2-tiny --gpus 1 --machine selene --seq 32 --batch 2 --out " + path("s32.yaml")).code, 0);
  r = axo("train --plan " + path("s32.yaml") + " --model gpt2-tiny" + data);
  EXPECT_EQ(r.code, 0) << r.output;
  std::ifstream tiny(axo::config_dir() + "/models/gpt2-tiny.yaml");
  std::string spec, line;
  while (std::getline(tiny, line)) {
    if (line.rfind("seq_len:", 0) != 0 && line.rfind("global_batch:", 0) != 0) spec += line + "\n";
  }
  std::ofstream(path("bare.yaml")) << spec;
  r = axo("train --plan " + path("s32.yaml") + " --model " + path("bare.yaml") + data);
  EXPECT_EQ(r.code, 0) << r.output;
  r = axo("train --model " + path("bare.yaml") + data);
  EXPECT_EQ(r.code, 0) << r.output;
}

// --precision: the log and run.json say which; bf16 with offload books 4
// bytes of model state per parameter on the device (2 + 2) against fp32's 16;
// the default is the model's (gpt2-tiny is fp32). --loss-scale dynamic with
// an injected overflow skips that step and halves the scale.
TEST_F(TrainCli, PrecisionAndLossScaling) {
  const std::string common = "train --model gpt2-tiny --data '" + path("lit_train_*.bin") +
                             "' --steps 3 --batch 2 --microbatch 2 --seq 32 ";
  Result r = axo(common + "--run " + path("fp32.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("precision: fp32"), std::string::npos) << r.output;
  r = axo(common + "--precision bf16 --offload --loss-scale dynamic --inject-fault overflow:0:2 --run " +
          path("bf16.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("precision: bf16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("step 2: inf or NaN gradients: skipped on every rank; loss scale 65536 -> 32768"),
            std::string::npos) << r.output;
  auto read = [&](const std::string& name) {
    std::ifstream in(path(name));
    return nlohmann::json::parse(in);
  };
  const nlohmann::json fp32 = read("fp32.json"), bf16 = read("bf16.json");
  EXPECT_EQ(fp32["precision"], "fp32");
  EXPECT_EQ(bf16["precision"], "bf16");
  auto model_state = [](const nlohmann::json& run) {
    const auto& at_peak = run["memory"]["ranks"][0]["device_at_peak_bytes"];
    return at_peak["weights"].get<double>() + at_peak["gradients"].get<double>() + at_peak["optimizer"].get<double>();
  };
  const double parameters = fp32["parameters"].get<double>();
  EXPECT_GE(model_state(fp32) / parameters, 16.0);
  EXPECT_LE(model_state(bf16) / parameters, 4.1);  // 2 + 2, plus the vocabulary's padding and a norm's fp32 window
  EXPECT_GE(model_state(fp32) / model_state(bf16), 3.9);
}

// --precision fp16: loss scaling is on without --loss-scale (an injected
// overflow is skipped and the scale halved), run.json says fp16, and with
// offload the device keeps 4 bytes of model state per parameter as bf16
// does. An fp16 plan trains in fp16 by default, without a note.
TEST_F(TrainCli, Fp16TrainsWithDynamicLossScaling) {
  const std::string common = "train --model gpt2-tiny --data '" + path("lit_train_*.bin") +
                             "' --steps 3 --batch 2 --microbatch 2 --seq 32 ";
  Result r = axo(common + "--precision fp16 --offload --inject-fault overflow:0:2 --run " + path("fp16.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("precision: fp16"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("note:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("step 2: inf or NaN gradients: skipped on every rank; loss scale 65536 -> 32768"),
            std::string::npos) << r.output;
  std::ifstream in(path("fp16.json"));
  const nlohmann::json run = nlohmann::json::parse(in);
  EXPECT_EQ(run["precision"], "fp16");
  EXPECT_FALSE(run.contains("planned_precision"));
  const auto& at_peak = run["memory"]["ranks"][0]["device_at_peak_bytes"];
  const double model_state =
      at_peak["weights"].get<double>() + at_peak["gradients"].get<double>() + at_peak["optimizer"].get<double>();
  EXPECT_LE(model_state / run["parameters"].get<double>(), 4.1);  // 2 + 2, as bf16 (PrecisionAndLossScaling)
  // An fp16 plan: trained in fp16, no note.
  const std::string plan = "plan --model gpt2-tiny --gpus 1 --machine selene --precision fp16 --out ";
  ASSERT_EQ(axo(plan + path("fp16.yaml")).code, 0);
  r = axo("train --plan " + path("fp16.yaml") + " --data '" + path("lit_train_*.bin") +
          "' --steps 1 --batch 2 --microbatch 2 --seq 32");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("precision: fp16"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("note:"), std::string::npos) << r.output;
}

// --precision fp8 (or an fp8 plan): the CPU executor trains in bf16 and says
// so on stdout, in the log's precision line and in run.json (issue 17).
TEST_F(TrainCli, Fp8TrainsInBf16AndSaysSo) {
  const Result r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") +
                       "' --steps 1 --batch 2 --microbatch 2 --seq 32 --precision fp8 --run " + path("fp8.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("note: gpt2-tiny in fp8 (--precision or the plan's), which the CPU executor does not train "
                          "in; training in bf16"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("precision: bf16 (asked for in fp8"), std::string::npos) << r.output;
  std::ifstream in(path("fp8.json"));
  const nlohmann::json run = nlohmann::json::parse(in);
  EXPECT_EQ(run["precision"], "bf16");
  EXPECT_EQ(run["planned_precision"], "fp8");
}

TEST_F(TrainCli, MistakesExitTwo) {
  Result r = axo("train --model gpt2-tiny --data '" + path("nothing_*.bin") + "' --steps 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("no token shard matches"), std::string::npos) << r.output;
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --batch 6 --microbatch 4");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--microbatch 4 does not divide --batch 6"), std::string::npos) << r.output;
  r = axo("train --model llama2-7b --data '" + path("lit_train_*.bin") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("GPT-2's architecture"), std::string::npos) << r.output;
  r = axo("train --model gpt2-124m --data '" + path("lit_train_*.bin") + "' --steps 1 --checkpoint-every 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("need --checkpoint-dir"), std::string::npos) << r.output;
  // Options that did nothing, silently: a validation set never read, a folder never written.
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 1 --val-data '" +
          path("lit_val_*.bin") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--val-data needs --val-every N"), std::string::npos) << r.output;
  // A validation set that is the training set (it had validated on the text it trained on), an
  // empty --overlap (taken for none given: the plan's), AdamW threads beyond the node's.
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 1 --val-every 1 --val-data '" +
          path("lit_*.bin") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("a training shard of --data"), std::string::npos) << r.output;
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 1 --overlap ''");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("names no overlap"), std::string::npos) << r.output;
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 1 --optimizer-threads 100000");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--optimizer-threads 100000: more than this node's"), std::string::npos) << r.output;
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 1 --checkpoint-dir " + path("ck"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("writes no checkpoint: give --checkpoint-every N"), std::string::npos) << r.output;
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 4 --stop-after 9 --checkpoint-dir " +
          path("ck"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--stop-after 9 is after the last step, --steps 4"), std::string::npos) << r.output;
  // A batch beyond the data (and any memory: 2^40 sequences) is refused before its buffers are
  // allocated, where it ended in std::bad_alloc.
  r = axo("train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 1 --batch 1099511627776");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("fewer than one batch of 1099511627776 sequences"), std::string::npos) << r.output;
  // A folder where a file goes is named so, where it read as "too short" or "expected a mapping".
  r = axo("train --model gpt2-tiny --data " + path("") + " --steps 1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(": is a folder, not a token shard"), std::string::npos) << r.output;
  r = axo("train --plan " + path("") + " --data '" + path("lit_train_*.bin") + "' --steps 1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(": is a folder, not a file"), std::string::npos) << r.output;
}

// What train writes is never what it reads, nor two outputs one file: --save-model onto a shard
// replaced the data; a checkpoint folder it cannot make fails before the first step.
TEST_F(TrainCli, OutputsThatWouldOverwriteInputsExitTwo) {
  const std::string shard = path("lit_train_000000.bin");
  const auto size = fs::file_size(shard);
  const std::string data = "train --model gpt2-tiny --data '" + path("lit_train_*.bin") + "' --steps 1 ";
  Result r = axo(data + "--save-model " + shard);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--save-model " + shard + " is a shard --data reads"), std::string::npos) << r.output;
  EXPECT_EQ(fs::file_size(shard), size);
  r = axo(data + "--run " + path("same") + " --save-model " + path("same"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--save-model and --run both write " + path("same")), std::string::npos) << r.output;
  std::ofstream(path("afile")) << "x";
  r = axo(data + "--checkpoint-every 1 --checkpoint-dir " + path("afile/sub"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--checkpoint-dir " + path("afile/sub") + ": cannot create it"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("| loss "), std::string::npos) << "refused before training\n" << r.output;
  // Nor the plan, the model, the --init-from file or a checkpoint it resumes from (all had been
  // replaced, exit 0).
  r = axo("plan --model gpt2-tiny --gpus 1 --machine selene --top 1 --out " + path("p.yaml"));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string plan_text = axo::testing::file_text(path("p.yaml"));
  const std::string on_plan = "train --plan " + path("p.yaml") + " --data '" + path("lit_train_*.bin") + "' --steps 1 ";
  r = axo(on_plan + "--run " + path("p.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--run " + path("p.yaml") + ": it is the --plan file, which this command reads"),
            std::string::npos) << r.output;
  EXPECT_EQ(axo::testing::file_text(path("p.yaml")), plan_text);
  // A copy of the preset: were the check gone, the repository's would be written over.
  fs::copy_file(axo::config_dir() + "/models/gpt2-tiny.yaml", path("tiny.yaml"));
  const std::string tiny_text = axo::testing::file_text(path("tiny.yaml"));
  r = axo("train --model " + path("tiny.yaml") + " --data '" + path("lit_train_*.bin") + "' --steps 1 --save-model " +
          path("tiny.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("it is the --model file"), std::string::npos) << r.output;
  EXPECT_EQ(axo::testing::file_text(path("tiny.yaml")), tiny_text);
  ASSERT_EQ(axo(data + "--save-model " + path("m.bin")).code, 0);
  r = axo(data + "--init-from " + path("m.bin") + " --run " + path("m.bin"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("it is the --init-from model file"), std::string::npos) << r.output;
  fs::create_directories(path("ck"));
  r = axo(data + "--checkpoint-every 1 --checkpoint-dir " + path("ck") + " --run " + path("ck/step_00000001.axockpt"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("it is a checkpoint of --checkpoint-dir " + path("ck")), std::string::npos) << r.output;
  r = axo(data + "--checkpoint-every 1 --checkpoint-dir " + path("new_ck") + " --run " + path("new_ck"));
  EXPECT_EQ(r.code, 2) << r.output;  // before training, not a failed write after it
  EXPECT_NE(r.output.find("--run " + path("new_ck") + ": it is --checkpoint-dir"), std::string::npos) << r.output;
}

}  // namespace
