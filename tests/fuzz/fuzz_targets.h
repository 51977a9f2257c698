// One function per parser that fuzzing exercises. Each takes arbitrary bytes
// and must either succeed or throw axo::InputError: any other exception, a
// crash, a hang or a sanitizer report is a bug. libFuzzer drives them
// (fuzz_main.cc, built by scripts/fuzz.sh with clang), and the regression
// test replays every input saved under tests/data/fuzz/<target>/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace axo::fuzz {

void model_spec(std::string_view bytes);       // model spec YAML, then costed
void hf_config(std::string_view bytes);        // Hugging Face config.json
void machine_profile(std::string_view bytes);  // machine profile YAML
void plan_file(std::string_view bytes);        // plan.yaml
void fix_option(std::string_view bytes);       // --fix key=value,...
void plan_csv(std::string_view bytes);         // the planner's CSV table
void token_shard(std::string_view bytes);      // an llm.c token shard file
void llmc_model(std::string_view bytes);       // an llm.c GPT-2 model file
void checkpoint(std::string_view bytes);       // a training checkpoint file
void run_file(std::string_view bytes);         // run.json, as axo report reads it

struct Target {
  const char* name;
  void (*run)(std::string_view);
};
const std::vector<Target>& targets();

}  // namespace axo::fuzz
