// The axo command line end to end: outputs, files, exit codes and messages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iterator>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "model/plan_file.h"
#include "model/presets.h"
#include "tests/file_text.h"
#include "tests/run_command.h"

namespace {

namespace fs = std::filesystem;

using Result = axo::testing::CommandResult;

Result axo(const std::string& arguments) { return axo::testing::run_axo(arguments); }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("axo_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  fs::path dir_;
};

TEST_F(Cli, PlanWritesTableCsvJsonAndPlan) {
  const Result r = axo("plan --model gpt3-13b --gpus 32 --machine selene --top 4 --explain --csv " +
                       path("p.csv") + " --json " + path("p.json") + " --out " + path("plan.yaml"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("configurations over"), std::string::npos);
  EXPECT_NE(r.output.find("Iteration breakdown"), std::string::npos);
  EXPECT_TRUE(fs::exists(path("p.csv")));
  EXPECT_TRUE(fs::exists(path("p.json")));
  const axo::Plan plan = axo::read_plan_file(path("plan.yaml"));
  EXPECT_EQ(plan.gpus, 32);
  EXPECT_EQ(plan.config.gpus(), 32);
  EXPECT_GT(plan.predicted.iter_time, 0);
}

TEST_F(Cli, PlanTimeToTrainGoodputAndThePicture) {
  const Result r = axo("plan --model gpt3-13b --gpus 32 --machine selene --top 3 --tokens 15e12 "
                       "--gpu-hour-price 2 --rank-by cost --explain --csv " + path("p.csv") + " --json " +
                       path("p.json") + " --svg " + path("space.svg"));
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* text : {"goodput", "ckpt_s", "days", "GPU_hours", "cost", "Failures and checkpoints",
                           "checkpoint interval", "train_days", "Wrote the space of"}) {
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  }
  std::ifstream csv(path("p.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find("goodput,checkpoint_interval_s,train_days,gpu_hours,cost"), std::string::npos) << header;
  std::ifstream json(path("p.json"));
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"training\""), std::string::npos);
  EXPECT_TRUE(fs::file_size(path("space.svg")) > 1000);
  Result bad = axo("plan --model gpt3-13b --gpus 32 --machine selene --gpu-hour-price 2");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--gpu-hour-price needs --tokens"), std::string::npos) << bad.output;
  // Budgets whose days or cost would not be finite numbers are refused with the bound.
  bad = axo("plan --model gpt3-13b --gpus 32 --machine selene --tokens 1e30");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--tokens 1e+30: at most 1e+17 tokens"), std::string::npos) << bad.output;
  bad = axo("plan --model gpt3-13b --gpus 32 --machine selene --tokens 1e12 --gpu-hour-price 1e300");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--gpu-hour-price 1e+300: at most 1e+07 per GPU-hour"), std::string::npos) << bad.output;
  bad = axo("plan --model gpt3-13b --gpus 32 --machine selene --rank-by speed");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--rank-by: expected iteration or cost, got 'speed'"), std::string::npos) << bad.output;
  // The help offers what works: goodput is refused (with why), so it is not listed.
  EXPECT_EQ(axo("plan --help").output.find("goodput,cost"), std::string::npos);
  // Below a billion parameters, millions.
  EXPECT_NE(axo("plan --model gpt2-mini --gpus 4 --machine selene --top 1").output.find("gpt2-mini (0.8M parameters, fp32)"),
            std::string::npos);
}

// --precision: fp8 priced at the fp8 rate with its casts and amax reductions
// listed, in the summary and the JSON; a machine without an fp8 rate and an
// unknown precision are usage errors naming the field.
TEST_F(Cli, PlanPrecisionFp8) {
  const Result r = axo("plan --model llama3-8b --gpus 8 --machine dgx-h100 --precision fp8 --top 1 --explain "
                       "--fix pipeline=1,data=1,context=1,z=1,y=8,x=1 --json " + path("p.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* text : {"(8.03B parameters, fp8)", "Precision fp8: the linear layers' GEMMs at 1979 TFLOP/s",
                           "fp8 casts of the 4 linear inputs", "all_reduce fp8 amaxes of a chunk's X and W",
                           "fp8 casts of the stage's linear weights"}) {
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  }
  std::ifstream json(path("p.json"));
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"precision\": \"fp8\""), std::string::npos);
  Result bad = axo("plan --model llama3-8b --gpus 8 --machine selene --precision fp8");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--precision: precision fp8: machine 'selene' has no fp8 rate (peak_tflops.fp8"),
            std::string::npos) << bad.output;
  bad = axo("plan --model llama3-8b --gpus 8 --machine dgx-h100 --precision fp4");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("precision 'fp4': expected fp32, fp16, bf16 or fp8"), std::string::npos) << bad.output;
}

// --json explains the row --rank chose, and says which; zero is a number as the other counts are.
TEST_F(Cli, PlanJsonExplainsTheChosenRank) {
  auto plan_json = [&](const std::string& rank, const std::string& file) {
    const Result r = axo("plan --model gpt3-13b --gpus 32 --machine dgx-h100 --top 3 --rank " + rank + " --json " +
                         path(file));
    EXPECT_EQ(r.code, 0) << r.output;
    std::ifstream in(path(file));
    return nlohmann::json::parse(in);
  };
  const nlohmann::json first = plan_json("1", "r1.json"), third = plan_json("3", "r3.json");
  EXPECT_EQ(first["explained_rank"], 1);
  EXPECT_EQ(third["explained_rank"], 3);
  EXPECT_EQ(first["configurations"], third["configurations"]);
  EXPECT_NE(first["explain"], third["explain"]);
  EXPECT_TRUE(third["configurations"][2]["zero"].is_number_integer());
  EXPECT_EQ(third["training"]["goodput"].get<double>(), third["configurations"][2]["goodput"].get<double>());
}

// Tables and counts beyond any use are usage errors at once (a --rank of 10^8 searched for minutes,
// --gpus 2^63 never ended); a --rank past the table says so without printing the table.
TEST_F(Cli, PlanRefusesTablesAndCountsBeyondAnyUse) {
  const std::string plan = "plan --model gpt3-13b --gpus 64 --machine selene ";
  for (const auto& [option, message] :
       {std::pair<std::string, std::string>{"--rank 100000000", "--rank: Value 100000000 not in range 1 to 10000"},
        {"--top 99999999999999", "--top: Value 99999999999999 not in range 1 to 10000"},
        {"--batch 9223372036854775807", "--batch: Value 9223372036854775807 not in range 1 to 1073741824"}}) {
    const Result r = axo(plan + option);
    EXPECT_EQ(r.code, 2) << option << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }
  const Result gpus = axo("plan --model gpt3-13b --gpus 9223372036854775807 --machine selene");
  EXPECT_EQ(gpus.code, 2) << gpus.output;
  const Result past = axo("plan --model gpt2-mini --gpus 2 --machine selene --rank 9999");
  EXPECT_EQ(past.code, 2) << past.output;
  EXPECT_NE(past.output.find("--rank 9999: only "), std::string::npos) << past.output;
  EXPECT_EQ(past.output.find(" xyzcdp "), std::string::npos) << "no table\n" << past.output;
}

// Every prediction carries its GPU type's band (CSV, JSON, table, --explain);
// a profile without a GPU type, or a type without published runs, says so.
TEST_F(Cli, PlanErrorBand) {
  const Result r = axo("plan --model gpt3-13b --gpus 32 --machine dgx-h100 --top 3 --explain --csv " +
                       path("b.csv") + " --json " + path("b.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Iteration time band: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("published H100-80 runs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Error band: predicted "), std::string::npos) << r.output;
  std::ifstream json_file(path("b.json"));
  const auto j = nlohmann::json::parse(json_file);
  const double low_pct = j["error_band"]["low_pct"], high_pct = j["error_band"]["high_pct"];
  for (const auto& row : j["configurations"]) {
    const double t = row["iter_time_s"];
    EXPECT_NEAR(row["iter_time_low_s"].get<double>(), t * (1 + low_pct / 100), 1e-9 * t);
    EXPECT_NEAR(row["iter_time_high_s"].get<double>(), t * (1 + high_pct / 100), 1e-9 * t);
  }
  std::ifstream csv(path("b.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find(",iter_time_low_s,iter_time_high_s,"), std::string::npos) << header;

  std::ifstream selene(axo::config_dir() + "/machines/selene.yaml");
  std::string profile, line;
  while (std::getline(selene, line)) {
    if (line.rfind("gpu_type:", 0) == 0) continue;  // a profile that names no GPU type
    profile += (line.rfind("backend:", 0) == 0 ? "backend: cpu" : line) + "\n";
  }
  write("cpu.yaml", profile);
  const Result cpu = axo("plan --model gpt2-mini --gpus 4 --machine " + path("cpu.yaml") + " --top 2 --explain --json " +
                         path("c.json"));
  ASSERT_EQ(cpu.code, 0) << cpu.output;
  EXPECT_NE(cpu.output.find("no band: the machine profile names no GPU type"), std::string::npos) << cpu.output;
  std::ifstream cpu_json(path("c.json"));
  EXPECT_EQ(nlohmann::json::parse(cpu_json)["configurations"][0].count("iter_time_low_s"), 0u);
  const Result v100 = axo("plan --model gpt3-13b --gpus 32 --machine summit --precision fp16 --top 2");
  EXPECT_NE(v100.output.find("no band: no published runs on V100-16"), std::string::npos) << v100.output;
  // Without a validation folder a plan still plans, with no band; validate needs --set and --corpus.
  const std::string model = axo::config_dir() + "/models/gpt2-mini.yaml";
  const std::string machine = axo::config_dir() + "/machines/selene.yaml";
  const Result bare = axo::testing::run_command("AXO_CONFIG_DIR=" + path("none") + " " + AXO_BINARY +
                                                " plan --top 1 --gpus 4 --model " + model + " --machine " + machine +
                                                " 2>&1");
  EXPECT_EQ(bare.code, 0) << bare.output;
  EXPECT_NE(bare.output.find("no band: no validation folder " + path("none") + "/validation"), std::string::npos)
      << bare.output;
  const Result validate = axo::testing::run_command("AXO_CONFIG_DIR=" + path("none") + " " + AXO_BINARY + " validate 2>&1");
  EXPECT_EQ(validate.code, 2) << validate.output;
  EXPECT_NE(validate.output.find("cannot read the validation folder"), std::string::npos) << validate.output;
  // A folder without the corpus: validate says so; a broken set says it was read for the band.
  fs::create_directories(path("bare/validation"));
  const Result no_corpus = axo::testing::run_command("AXO_CONFIG_DIR=" + path("bare") + " " + AXO_BINARY +
                                                     " validate 2>&1");
  EXPECT_EQ(no_corpus.code, 2) << no_corpus.output;
  EXPECT_NE(no_corpus.output.find(path("bare") + "/validation: no corpus (a YAML file with `corpus:`"),
            std::string::npos) << no_corpus.output;
  write("bare/validation/broken.yaml", "name: b\npoints: 3\n");
  const Result broken = axo::testing::run_command("AXO_CONFIG_DIR=" + path("bare") + " " + AXO_BINARY +
                                                  " plan --top 1 --gpus 4 --model " + model + " --machine " + machine +
                                                  " 2>&1");
  EXPECT_EQ(broken.code, 2) << broken.output;
  EXPECT_NE(broken.output.find("(read for the error band on A100-80 from the published runs in " + path("bare") +
                               "/validation)"), std::string::npos) << broken.output;
}

// A bf16 model on a profile with an fp32 rate alone is refused, naming the profile's file and field
// (it was planned at the fp32 rate).
TEST_F(Cli, PlanRefusesAPrecisionTheMachineHasNoRateFor) {
  std::ifstream h100(axo::config_dir() + "/machines/dgx-h100.yaml");
  std::string profile, line;
  while (std::getline(h100, line)) profile += (line.rfind("peak_tflops:", 0) == 0 ? "peak_tflops: {fp32: 67}" : line) + "\n";
  const std::string fp32_only = write("fp32-only.yaml", profile);
  const Result r = axo("plan --model gpt2-124m --gpus 8 --machine " + fp32_only);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("gpt2-124m: precision bf16: machine 'dgx-h100' has no bf16 rate (peak_tflops.bf16 in "
                          "its profile " + fp32_only + ")"),
            std::string::npos) << r.output;
  EXPECT_EQ(axo("plan --model gpt2-124m --gpus 8 --machine " + fp32_only + " --precision fp32 --top 1").code, 0);
}

TEST_F(Cli, ListsAndValidates) {
  EXPECT_NE(axo("models").output.find("llama3-405b"), std::string::npos);
  EXPECT_NE(axo("machines").output.find("perlmutter"), std::string::npos);
  // A config folder that does not exist is said, not shown as an empty table.
  const Result none = axo::testing::run_command("AXO_CONFIG_DIR=" + path("none") + " " + AXO_BINARY + " models 2>&1");
  EXPECT_EQ(none.code, 2) << none.output;
  EXPECT_NE(none.output.find("no model presets in " + path("none") + "/models"), std::string::npos) << none.output;
  EXPECT_EQ(none.output.find("params"), std::string::npos) << none.output;  // no table header before the error
  // Columns as wide as the longest name (grand-teton-h100's 16 letters pushed its row out).
  const std::string listed = axo("machines").output;
  EXPECT_NE(listed.find("\nsummit                   6       16          -"), std::string::npos) << listed;
  EXPECT_NE(listed.find("\ngrand-teton-h100         8"), std::string::npos) << listed;
  const Result v = axo("validate");
  EXPECT_EQ(v.code, 0) << v.output;
  EXPECT_NE(v.output.find("mean |error|"), std::string::npos);
}

// A preset is its file: a folder named *.yaml is none, and a `name:` other than the file's
// (a copy of selene named selene) is refused where it would print one name and look up another.
TEST_F(Cli, PresetsAreTheirFiles) {
  fs::create_directories(path("config/machines/sub.yaml"));
  fs::create_directories(path("config/models"));
  fs::copy_file(axo::config_dir() + "/machines/selene.yaml", path("config/machines/selene.yaml"));
  fs::copy_file(axo::config_dir() + "/machines/selene.yaml", path("config/machines/fake.yaml"));
  fs::copy_file(axo::config_dir() + "/models/gpt2-mini.yaml", path("config/models/gpt2-mini.yaml"));
  const std::string env = "AXO_CONFIG_DIR=" + path("config") + " " + AXO_BINARY;
  const Result listed = axo::testing::run_command(env + " machines 2>&1");
  EXPECT_EQ(listed.code, 2) << listed.output;  // listing loads fake.yaml, whose name is selene's
  const Result fake = axo::testing::run_command(env + " plan --model gpt2-mini --gpus 4 --machine fake 2>&1");
  EXPECT_EQ(fake.code, 2) << fake.output;
  EXPECT_NE(fake.output.find("fake.yaml: field 'name': 'selene' is not the preset's file name 'fake'"),
            std::string::npos) << fake.output;
  fs::remove(path("config/machines/fake.yaml"));
  const Result real = axo::testing::run_command(env + " machines 2>&1");
  EXPECT_EQ(real.code, 0) << real.output;
  EXPECT_EQ(real.output.find("sub"), std::string::npos) << real.output;
  const Result sub = axo::testing::run_command(env + " plan --model gpt2-mini --gpus 4 --machine sub 2>&1");
  EXPECT_NE(sub.output.find("(presets in " + path("config") + "/machines: selene)"), std::string::npos) << sub.output;
}

// `arguments` exit 2 with `message` in the output.
void expect_usage_error(const std::string& arguments, const std::string& message) {
  const Result r = axo(arguments);
  EXPECT_EQ(r.code, 2) << arguments;
  EXPECT_NE(r.output.find(message), std::string::npos) << arguments << "\n" << r.output;
}

TEST_F(Cli, UsageErrorsExitTwo) {
  expect_usage_error("plan --model gpt3-13b --machine selene", "--gpus is required");
  expect_usage_error("plna --model gpt3-13b", "unknown command 'plna' (commands: plan, models, machines,");
  expect_usage_error("plan --model gpt-7 --gpus 8 --machine selene", "'gpt-7' is neither a file nor a model preset");
  expect_usage_error("plan --model gpt3-13b --gpus 8 --machine selene --fix pipeline=2,data=2,context=1,x=1,y=1,z=1",
                     "pipeline*data*context*z*y*x = 4 does not equal --gpus 8");
  expect_usage_error("plan --model gpt3-13b --gpus 8 --machine selene --fix colour=red", "unknown key 'colour'");
  // Numbers: the value and the rule, not a range.
  expect_usage_error("plan --model gpt3-13b --gpus 0 --machine selene", "--gpus: 0 is not a positive number");
  expect_usage_error("plan --model gpt3-13b --gpus eight --machine selene", "--gpus: 'eight' is not a finite number");
  expect_usage_error("plan --model gpt3-13b --gpus 8 --machine selene --tokens inf",
                     "--tokens: 'inf' is not a finite number");
  expect_usage_error("train --lr -1", "--lr: -1 is not zero or more");
  expect_usage_error("train --weight-decay ' 0.1 '",
                     "--weight-decay: ' 0.1 ' is not a finite number (spaces around it are not a number's)");
  // Whole numbers in range: CLI11 would wrap -1 and clamp a larger one to 2^64 - 1.
  for (const char* seed : {"-1", "18446744073709551616", "1.5"}) {
    expect_usage_error("train --seed " + std::string(seed),
                       "--seed: '" + std::string(seed) + "' is not a whole number from 0 to 18446744073709551615");
  }
  expect_usage_error("plan --model gpt3-13b --gpus 8 --machine selene --seq 16777217",
                     "--seq: '16777217' is not a whole number from 1 to 16777216");  // not the model file's
  expect_usage_error("calibrate --name selene --out " + path("c.yaml"),
                     "--name selene: a machine preset has that name");
  expect_usage_error("calibrate --iters 99999999999 --out " + path("c.yaml"),
                     "--iters: '99999999999' is not a whole number from 1 to 1000000");
  EXPECT_EQ(axo("frobnicate").code, 2);
}

// An option left without its value takes no option name for it: CLI11 hands it the next word,
// and `validate --csv --fit` had written a file named "--fit".
TEST_F(Cli, AnOptionNameIsNoValue) {
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  expect_usage_error("validate --csv --fit", "--csv: '--fit' is an option, not a value");
  EXPECT_FALSE(fs::exists(dir_ / "--fit"));
  fs::current_path(before);
  expect_usage_error("calibrate --refine --plan p.yaml --out " + path("c.yaml"),
                     "--refine: '--plan' is an option, not a value");
  expect_usage_error("plan --model gpt3-13b --gpus 8 --machine selene --fix --top 3",
                     "--fix: '--top' is an option, not a value");
  expect_usage_error("data encode --in " + write("t.txt", "text") + " --out --shard-tokens 5",
                     "--out: '--shard-tokens' is an option, not a value");
  // Before the value's own checks, which named it as a missing file.
  expect_usage_error("validate --set --csv " + path("o.csv"), "--set: '--csv' is an option, not a value");
  expect_usage_error("data encode --in --out x", "--in: '--out' is an option, not a value");
  // --name= with nothing after it took the next word too: --csv= --fit wrote a file named "--fit".
  expect_usage_error("validate --csv= --fit", "--csv: an empty value after '=': give --csv its value");
  EXPECT_FALSE(fs::exists(dir_ / "--fit"));
  // A negative number is still the option's value, for its own check to name.
  expect_usage_error("train --lr -1", "--lr: -1 is not zero or more");
}

TEST_F(Cli, MalformedYamlNamesFileAndLine) {
  const std::string model = write("bad.yaml", "name: bad\nlayers: 12\nhidden: [768\nheads: 12\n");
  Result r = axo("plan --model " + model + " --gpus 8 --machine selene");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find(model + ":"), std::string::npos) << r.output;
  const std::string typo = write("typo.yaml",
                                 "name: t\nlayers: 12\nhidden: 768\nheads: 12\nseq_len: 1024\n"
                                 "vocab: 50257\nglobal_batch: 8\nhiden: 3\n");
  r = axo("plan --model " + typo + " --gpus 8 --machine selene");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find(typo + ":8:1: field 'hiden': unknown field"), std::string::npos) << r.output;
  const std::string twice = write("twice.yaml",
                                  "name: t\nlayers: 12\nhidden: 768\nheads: 12\nseq_len: 1024\n"
                                  "vocab: 50257\nglobal_batch: 8\nlayers: 24\n");
  r = axo("plan --model " + twice + " --gpus 8 --machine selene");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find(twice + ":8:1: field 'layers': given twice in the model spec (first on line 2)"),
            std::string::npos) << r.output;
}

// Two outputs naming one file would overwrite each other (a Slurm script written over the
// plan.yaml it runs): a usage error before any work, naming both options.
TEST_F(Cli, OutputsNamingOneFileAreAUsageError) {
  const std::string plan = "plan --model llama3-8b --gpus 16 --machine dgx-h100 --top 1 ";
  Result r = axo(plan + "--emit slurm --emit-out " + path("run.plan.yaml") + " --csv " + path("run.plan.plan.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--csv and --emit-out's .plan.yaml both write"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("run.plan.yaml")));
  r = axo(plan + "--json " + path("f") + " --csv " + dir_.string() + "/./f");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--csv and --json both write"), std::string::npos) << r.output;
  r = axo(plan + "--out " + path("same") + " --emit megatron --emit-out " + path("same"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--emit-out and --out both write"), std::string::npos) << r.output;
  // (The Slurm script runs axo train, which trains GPT-2's architecture.)
  EXPECT_EQ(axo("plan --model gpt2-124m --gpus 16 --machine dgx-h100 --top 1 --out " + path("p.yaml") +
                " --emit slurm --emit-out " + path("run.sbatch")).code,
            0);
}

// An output naming the --model or --machine file would replace what the command reads.
TEST_F(Cli, OutputsNamingAnInputAreAUsageError) {
  const std::string model = write("m.yaml", "name: m\nlayers: 2\nhidden: 64\nheads: 4\nseq_len: 128\nvocab: 512\n"
                                            "global_batch: 8\nprecision: fp32\n");
  Result r = axo("plan --model " + model + " --gpus 2 --machine selene --csv " + model);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--csv " + model + ": it is the --model file, which this command reads"), std::string::npos)
      << r.output;
  EXPECT_NE(axo::testing::file_text(model).find("layers: 2"), std::string::npos);
  const std::string machine = path("mine.yaml");
  fs::copy_file(axo::config_dir() + "/machines/selene.yaml", machine);
  r = axo("plan --model " + model + " --gpus 2 --machine " + machine + " --out " + machine);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--out " + machine + ": it is the --machine file"), std::string::npos) << r.output;
}

// report's --csv and --svg, and calibrate's --out, never replace a file the command reads.
TEST_F(Cli, ReportAndRefineOutputsNamingAnInputAreUsageErrors) {
  const std::string plan = path("p.yaml"), run = write("r.json", "{}"), machine = path("m.yaml");
  ASSERT_EQ(axo("plan --model gpt2-tiny --gpus 2 --machine selene --out " + plan).code, 0);
  fs::copy_file(axo::config_dir() + "/machines/selene.yaml", machine);
  const std::string report = "report --plan " + plan + " --run " + run;
  for (const auto& [command, message] :
       {std::pair{report + " --csv " + plan, "--csv " + plan + ": it is a --plan file, which this command reads"},
        {report + " --svg " + run, "--svg " + run + ": it is a --run file"},
        {report + " --machine " + machine + " --svg " + machine, "--svg " + machine + ": it is the --machine file"},
        {report + " --csv " + path("x") + " --svg " + path("x"), "--csv and --svg both write"},
        {"calibrate --refine " + run + " --plan " + plan + " --machine " + machine + " --out " + machine,
         "--out " + machine + ": it is the --machine file"},
        {"calibrate --refine " + run + " --plan " + plan + " --machine selene --out " + run,
         "--out " + run + ": it is a --refine run"}}) {
    const Result r = axo(command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << command << "\n" << r.output;
  }
  EXPECT_EQ(axo::testing::file_text(run), "{}");
}

// An export the target cannot express writes no file; a sidecar that cannot be written is found
// before any work; stdout that cannot be written (a full disk) fails the command.
TEST_F(Cli, AFailedPlanWritesNothingAndSaysWhy) {
  Result r = axo("plan --model llama2-7b --gpus 16 --machine dgx-h100 --fix x=2,pipeline=1 --emit megatron --csv " +
                 path("o.csv") + " --json " + path("o.json") + " --out " + path("o.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  for (const char* file : {"o.csv", "o.json", "o.yaml"}) EXPECT_FALSE(fs::exists(path(file))) << file;
  // Nothing fits (the closest configuration is shown, not written); a cost ranking with no progress.
  r = axo("plan --model llama3-405b --gpus 8 --machine dgx-h100 --csv " + path("o.csv") + " --json " + path("o.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("nothing fits"), std::string::npos) << r.output;
  for (const char* file : {"o.csv", "o.json"}) EXPECT_FALSE(fs::exists(path(file))) << file;
  std::string machine = axo::testing::file_text(axo::config_dir() + "/machines/dgx-h100.yaml");
  const size_t rate = machine.find("failures_per_gpu_hour:");
  ASSERT_NE(rate, std::string::npos);
  machine.replace(rate, machine.find('\n', rate) - rate, "failures_per_gpu_hour: 1");
  r = axo("plan --model gpt2-124m --gpus 8 --machine " + write("failing.yaml", machine) + " --rank-by cost --csv " +
          path("o.csv") + " --json " + path("o.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--rank-by cost: "), std::string::npos) << r.output;
  for (const char* file : {"o.csv", "o.json"}) EXPECT_FALSE(fs::exists(path(file))) << file;
  fs::create_directories(path("x.json.args.sh"));
  r = axo("plan --model llama2-7b --gpus 16 --machine dgx-h100 --emit deepspeed --emit-out " + path("x.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--emit-out's .args.sh: cannot write " + path("x.json.args.sh") + ": it is a folder"),
            std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("x.json")));
  if (fs::exists("/dev/full")) {
    r = axo::testing::run_command(std::string(AXO_BINARY) + " plan --model llama2-7b --gpus 8 --machine dgx-h100 "
                                  "--emit megatron 2>&1 >/dev/full");
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("writing the standard output failed: No space left on device"), std::string::npos)
        << r.output;
  }
}

// A model an export cannot state is refused before the search: the Slurm script runs axo train,
// which trains GPT-2's architecture; Megatron-LM's arguments state Qwen2's q/k/v biases, rotary
// base and norm epsilon, and no flag states OPT's ReLU. A sliding window shorter than the
// sequence is refused by plan, which prices full attention, and read by the other commands.
TEST_F(Cli, ExportsRefuseModelsTheyCannotState) {
  Result r = axo("plan --model llama3-8b --gpus 16 --machine dgx-h100 --emit slurm --out " + path("p.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--emit slurm: the script runs axo train, which cannot train this model: llama3-8b: the "
                          "CPU executor trains GPT-2's architecture"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("configurations over"), std::string::npos) << "refused before the search\n" << r.output;
  EXPECT_FALSE(fs::exists(path("p.yaml")));
  const std::string qwen2 = write("config.json", R"({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "hidden_act": "silu",
    "max_position_embeddings": 32768, "vocab_size": 151936, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
    "sliding_window": 32768, "use_sliding_window": false, "tie_word_embeddings": true})");
  r = axo("plan --model " + qwen2 + " --gpus 8 --machine dgx-h100 --batch 64 --seq 4096 --top 1");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("Sequence: "), std::string::npos) << r.output;  // --seq gave it
  r = axo("plan --model " + qwen2 + " --gpus 64 --machine dgx-h100 --batch 64 --top 1");
  EXPECT_NE(r.output.find("Sequence: 32768 tokens, the config.json's max_position_embeddings"), std::string::npos)
      << r.output;
  r = axo("plan --model " + qwen2 + " --gpus 8 --machine dgx-h100 --batch 64 --seq 4096 --fix zero=1 "
          "--emit megatron 2>/dev/null");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* line : {"  --rotary-base 1000000\n", "  --norm-epsilon 1e-06\n",
                           "  --disable-bias-linear\n  --add-qkv-bias\n"}) {
    EXPECT_NE(r.output.find(line), std::string::npos) << line << r.output;
  }
  r = axo("plan --model " + qwen2 + " --gpus 8 --machine dgx-h100 --batch 64 --seq 4096 --emit deepspeed");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--emit deepspeed: the arguments for DeepSpeed (Megatron-DeepSpeed) would state another "
                          "model than qwen2: axo writes no flag for these details of it: biases on q, k and v alone "
                          "(qkv_bias)"),
            std::string::npos) << r.output;
  const std::string opt = write("opt.json", R"({"model_type": "opt", "hidden_size": 512, "num_hidden_layers": 2,
    "num_attention_heads": 8, "ffn_dim": 2048, "activation_function": "relu", "vocab_size": 1000,
    "max_position_embeddings": 128})");
  r = axo("plan --model " + opt + " --gpus 2 --machine selene --batch 8 --emit megatron");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("axo writes no flag for these details of it: an MLP of relu, priced as GELU's"),
            std::string::npos) << r.output;
  const std::string mistral = write("mistral.json", R"({"model_type": "mistral", "hidden_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 1792,
    "max_position_embeddings": 32768, "vocab_size": 1000, "sliding_window": 4096})");
  r = axo("plan --model " + mistral + " --gpus 2 --machine selene --batch 8");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("field 'sliding_window': attention over the last 4096 tokens, fewer than the sequence of "
                          "32768: axo prices full causal attention (plan with --seq 4096 or less"),
            std::string::npos) << r.output;
  EXPECT_EQ(axo("plan --model " + mistral + " --gpus 2 --machine selene --batch 8 --seq 4096 --top 1").code, 0);
}

// Inputs of the wrong kind say what they are: a plan given as a model, an empty export format.
TEST_F(Cli, InputsOfTheWrongKindSayWhatTheyAre) {
  Result r = axo("plan --model gpt2-124m --gpus 2 --machine selene --top 1 --out " + path("p.yaml"));
  ASSERT_EQ(r.code, 0) << r.output;
  r = axo("plan --model " + path("p.yaml") + " --gpus 2 --machine selene");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("field 'axo_plan': a plan (plan.yaml), not a model spec"), std::string::npos) << r.output;
  r = axo("plan --model gpt2-124m --gpus 2 --machine selene --emit ''");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("names no export format"), std::string::npos) << r.output;
  r = axo("validate --set " + axo::config_dir() + "/validation/public-runs.yaml");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("a corpus description (public-runs.yaml), not a validation set: give it with --corpus"),
            std::string::npos) << r.output;
}

// A model's name goes into the comments and job names of generated scripts: a line break in it
// would start a command there. Refused, naming the field.
TEST_F(Cli, AModelNameWithALineBreakIsRefused) {
  const std::string model = write("nl.yaml", "name: \"a\\nrm -i nothing\"\nlayers: 2\nhidden: 64\nheads: 4\n"
                                             "seq_len: 128\nvocab: 1000\nglobal_batch: 8\n");
  const Result r = axo("plan --model " + model + " --gpus 2 --machine selene --emit slurm");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(model + ": field 'name': control characters"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("#SBATCH"), std::string::npos) << r.output;
}

TEST_F(Cli, ImpossibleRequestsSayWhy) {
  Result r = axo("plan --model gpt2-124m --gpus 13 --machine selene");  // 13 > its 12 layers and divides nothing
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("does not divide"), std::string::npos) << r.output;
  r = axo("plan --model llama3-405b --gpus 6 --machine summit --precision fp16");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("nothing fits"), std::string::npos) << r.output;
  // V100 has no bf16: a bf16 model is refused there, naming what the machine prices.
  expect_usage_error("plan --model llama3-405b --gpus 6 --machine summit", "has no bf16 rate");
  expect_usage_error("plan --model llama3-405b --gpus 6 --machine summit", "it prices fp32, fp16");
  EXPECT_NE(r.output.find("GiB too much"), std::string::npos) << r.output;
  // The closest configuration's table and explanation come whole before the error line, and
  // its training estimate is priced like any row's.
  r = axo("plan --model gpt3-175b --gpus 8 --machine selene --explain");
  EXPECT_EQ(r.code, 2);
  const size_t error = r.output.find("axo: error: gpt3-175b on 8 GPUs of selene: nothing fits");
  ASSERT_NE(error, std::string::npos) << r.output;
  EXPECT_EQ(r.output[error - 1], '\n') << r.output;
  EXPECT_EQ(r.output.find('\n', error) + 1, r.output.size()) << r.output;  // the last line
  EXPECT_NE(r.output.find("Iteration breakdown"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("|  0.0000       0 "), std::string::npos) << r.output;  // goodput and checkpoint interval
}

// The number of times `clause` occurs in `text`.
size_t occurrences(const std::string& text, const std::string& clause) {
  size_t count = 0;
  for (size_t at = text.find(clause); at != std::string::npos; at = text.find(clause, at + 1)) ++count;
  return count;
}

// An odd sequence plans without context parallelism; with it, the clause is said once.
TEST_F(Cli, AnOddSequenceNeedsNoContextParallelism) {
  const std::string base = "plan --model gpt2-124m --gpus 8 --machine dgx-h100 --seq 1023 --top 1";
  Result r = axo(base + " --fix context=1");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(axo(base).code, 0);
  r = axo(base + " --fix context=2");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(occurrences(r.output, "context=2: 2*context=4 does not divide seq_len=1023"), 1u) << r.output;
}

// GPT-2's presets have its 1024 learned positions, as its config.json: a longer --seq is refused.
TEST_F(Cli, GptTwoPresetsKeepTheirPositionTable) {
  const Result r = axo("plan --model gpt2-124m --seq 4096 --gpus 8 --machine dgx-h100 --top 1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("field 'position_table': 1024 learned positions, fewer than the sequence of 4096 tokens "
                          "(seq_len or --seq)"),
            std::string::npos) << r.output;
  EXPECT_EQ(axo("plan --model gpt2-124m --seq 512 --gpus 8 --machine dgx-h100 --top 1").code, 0);
}

// A --fix no configuration can hold names the rule its values break; a field given twice is refused.
TEST_F(Cli, ImpossibleFixNamesTheRule) {
  const std::string base = "plan --model llama3-70b --gpus 64 --machine dgx-h100 --fix ";
  expect_usage_error(base + "interleave=3,pipeline=1",
                     "no configuration of llama3-70b on 64 GPUs matches --fix interleave=3,pipeline=1: "
                     "interleave=3 needs pipeline>1");
  expect_usage_error(base + "microbatch=3",
                     "matches --fix microbatch=3: microbatch=3 does not divide global_batch=512");
  expect_usage_error(base + "sequence_parallel=on,y=1", "not y=1");
  expect_usage_error(base + "pipeline=2,pipeline=4",
                     "--fix: pipeline given twice (pipeline=2, then pipeline=4): give each field once");
  expect_usage_error(base + "recompute=full,recompute_layers=100",
                     "recompute_layers=100 is more than the 80 layers of the model");
  // A free pipeline divides the GPUs too: 3 microbatches at most, and no pipeline of 8 GPUs divides 3.
  expect_usage_error("plan --model gpt3-13b --gpus 8 --machine selene --batch 3 --fix interleave=3",
                     "at most 3, and no pipeline > 1 that divides the 8 GPUs divides 3");
  expect_usage_error(base + "data=3", "data=3 does not divide the 64 GPUs");
}

TEST_F(Cli, HuggingFaceConfigNeedsABatch) {
  const std::string config = write("config.json",
                                   R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
                                       "num_attention_heads": 32, "num_key_value_heads": 8,
                                       "intermediate_size": 8192, "hidden_act": "silu",
                                       "max_position_embeddings": 4096, "vocab_size": 128256,
                                       "rms_norm_eps": 1e-5})");
  Result r = axo("plan --model " + config + " --gpus 8 --machine dgx-h100");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("pass --batch"), std::string::npos) << r.output;
  r = axo("plan --model " + config + " --gpus 8 --machine dgx-h100 --batch 256 --top 2");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("Approximated:"), std::string::npos) << r.output;
  // What it prices as its nearest is said under the summary, not dropped silently.
  const std::string biased = write("biased.json", axo::testing::file_text(config).replace(
                                                      axo::testing::file_text(config).find("\"rms_norm_eps\""), 0,
                                                      "\"mlp_bias\": true, "));
  r = axo("plan --model " + biased + " --gpus 8 --machine dgx-h100 --batch 256 --top 2");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Approximated: biases on the MLP's linears only (mlp_bias: true), priced without them\n"),
            std::string::npos) << r.output;
  const std::string broken = write("broken.json", "{\"hidden_size\": 12,");
  r = axo("plan --model " + broken + " --gpus 8 --machine dgx-h100 --batch 8");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("malformed JSON"), std::string::npos) << r.output;
  const std::string mixtral = write("mixtral.json",
                                    R"({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
                                        "num_attention_heads": 32, "num_key_value_heads": 8,
                                        "intermediate_size": 14336, "max_position_embeddings": 32768,
                                        "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2})");
  expect_usage_error("plan --model " + mixtral + " --gpus 8 --machine dgx-h100 --batch 8",
                     mixtral + ": field 'num_local_experts': 8: a mixture-of-experts model");
}

// --batch and --seq supply what a model file leaves out; without them the field is named.
TEST_F(Cli, BatchAndSeqOptionsSupplyWhatTheModelFileLacks) {
  const std::string spec = write("no-batch.yaml", "name: m\nlayers: 4\nhidden: 256\nheads: 4\nseq_len: 512\nvocab: 1000\n");
  expect_usage_error("plan --model " + spec + " --gpus 8 --machine dgx-h100", "field 'global_batch'");
  Result r = axo("plan --model " + spec + " --gpus 8 --machine dgx-h100 --batch 64 --top 1");
  EXPECT_EQ(r.code, 0) << r.output;
  const std::string config = write("no-positions.json",
                                   R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4,
                                       "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000})");
  expect_usage_error("plan --model " + config + " --gpus 8 --machine dgx-h100 --batch 64",
                     "field 'max_position_embeddings'");
  r = axo("plan --model " + config + " --gpus 8 --machine dgx-h100 --batch 64 --seq 1024 --top 1");
  EXPECT_EQ(r.code, 0) << r.output;
}

// Failures faster than restarts: the goodput is 0, a token budget has no finite time (refused, in
// the job's own numbers), and a plain plan says why its goodput column reads 0.
TEST_F(Cli, GoodputZeroIsExplainedNotInfinite) {
  std::ifstream selene(axo::config_dir() + "/machines/selene.yaml");
  std::string profile, line;
  while (std::getline(selene, line)) {
    profile += (line.rfind("failures_per_gpu_hour:", 0) == 0 ? "failures_per_gpu_hour: 0.01" : line) + "\n";
  }
  write("flaky.yaml", profile);
  const std::string plan = "plan --model gpt3-175b --gpus 1024 --top 2 --machine " + path("flaky.yaml");
  expect_usage_error(plan + " --tokens 3e11", "--tokens: the job on 1024 GPUs fails every 352 s on average");
  expect_usage_error(plan + " --rank-by cost", "no work survives (goodput 0)");
  const Result r = axo(plan);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Note: the job on 1024 GPUs fails every 352 s"), std::string::npos) << r.output;
  EXPECT_EQ(axo("plan --model gpt3-175b --gpus 1024 --top 2 --machine selene").output.find("Note:"), std::string::npos);
}

}  // namespace
