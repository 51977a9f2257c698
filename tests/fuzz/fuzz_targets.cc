// The parsers under fuzzing (see fuzz_targets.h).
#include "tests/fuzz/fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "executor/data/token_shards.h"
#include "executor/gpt/llmc_checkpoint.h"
#include "executor/train/checkpoint.h"
#include "model/cost_model.h"
#include "model/error.h"
#include "model/hf_config.h"
#include "model/plan_file.h"
#include "model/presets.h"
#include "model/yaml_fields.h"
#include "planner/plan_table.h"
#include "report/run_file.h"

namespace axo::fuzz {

namespace {

// Accepts success and InputError; lets everything else escape.
template <class F>
void expect_clean(F&& parse) {
  try {
    parse();
  } catch (const InputError&) {
  }
}

// The file readers take paths: the bytes go to a file of this process first.
std::string as_file(std::string_view bytes) {
  static const std::string path = "/tmp/axo_fuzz_input_" + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
  return path;
}

const MachineProfile& selene() {
  static const MachineProfile machine = load_machine("selene");
  return machine;
}

// A spec that parsed is costed on a small configuration it allows.
void cost_a_little(const TransformerSpec& spec) {
  const CostModel model(spec, selene());
  ParallelConfig config;
  if (model.check(config).empty()) model.evaluate(config);
  config.y = spec.heads;
  config.pipeline = spec.layers;
  if (model.check(config).empty()) model.evaluate(config);
}

}  // namespace

void model_spec(std::string_view bytes) {
  expect_clean([&] {
    const TransformerSpec spec = transformer_spec_from_yaml(load_yaml_text(std::string(bytes), "fuzz"), "fuzz");
    validate(spec, "fuzz");
    cost_a_little(spec);
  });
}

void hf_config(std::string_view bytes) {
  expect_clean([&] {
    TransformerSpec spec = transformer_spec_from_hf_text(std::string(bytes), "fuzz");
    spec.global_batch = 8;
    validate(spec, "fuzz");
    cost_a_little(spec);
  });
}

void machine_profile(std::string_view bytes) {
  expect_clean([&] {
    const MachineProfile machine = machine_profile_from_yaml(load_yaml_text(std::string(bytes), "fuzz"), "fuzz");
    YAML::Emitter out;
    out << to_yaml(machine);
  });
}

void plan_file(std::string_view bytes) {
  expect_clean([&] { plan_from_yaml(load_yaml_text(std::string(bytes), "fuzz"), "fuzz"); });
}

void fix_option(std::string_view bytes) {
  expect_clean([&] { parse_fix(std::string(bytes)); });
}

void plan_csv(std::string_view bytes) {
  expect_clean([&] { plan_rows_from_csv(std::string(bytes), "fuzz"); });
}

void token_shard(std::string_view bytes) {
  expect_clean([&] { read_token_shard(as_file(bytes)); });
}

void llmc_model(std::string_view bytes) {
  expect_clean([&] {
    GptShape shape;
    std::vector<float> parameters;
    read_llmc_model(as_file(bytes), shape, parameters);
  });
}

void checkpoint(std::string_view bytes) {
  expect_clean([&] { read_checkpoint(as_file(bytes)); });
}

void run_file(std::string_view bytes) {
  expect_clean([&] { read_run_file(as_file(bytes)); });
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"model_spec", model_spec},   {"hf_config", hf_config},   {"machine_profile", machine_profile},
      {"plan_file", plan_file},     {"fix_option", fix_option}, {"plan_csv", plan_csv},
      {"token_shard", token_shard}, {"llmc_model", llmc_model}, {"checkpoint", checkpoint},
      {"run_file", run_file}};
  return all;
}

}  // namespace axo::fuzz
