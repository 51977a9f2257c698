// `axo data encode`: text files into llm.c token shards (byte-level tokens).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "executor/data/token_shards.h"
#include "model/error.h"
#include "tools/commands.h"
#include "tools/output_path.h"

namespace axo::tools {

namespace {

struct EncodeArguments {
  std::vector<std::string> inputs;
  std::string out;
  double val_fraction = 0.1;
  int64_t shard_tokens = 1 << 24;
};

void write_shards(const std::string& prefix, const std::string& split, const std::vector<uint16_t>& tokens,
                  int64_t per_shard) {
  for (int64_t start = 0, index = 0; start < int64_t(tokens.size()); start += per_shard, ++index) {
    const int64_t end = std::min<int64_t>(start + per_shard, int64_t(tokens.size()));
    char name[64];
    std::snprintf(name, sizeof name, "_%s_%06lld.bin", split.c_str(), (long long)index);
    write_token_shard(prefix + name, std::vector<uint16_t>(tokens.begin() + start, tokens.begin() + end));
    std::printf("wrote %s%s: %lld tokens\n", prefix.c_str(), name, (long long)(end - start));
  }
}

void encode(const EncodeArguments& a) {
  std::string text;
  for (const std::string& path : a.inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open");
    std::stringstream buffer;
    buffer << in.rdbuf();
    text += buffer.str();
  }
  const std::vector<uint16_t> tokens = encode_bytes(text);
  const size_t val = size_t(double(tokens.size()) * a.val_fraction);
  if (tokens.size() - val < 2) throw InputError("--in: too little text to make a training shard");
  write_shards(a.out, "train", std::vector<uint16_t>(tokens.begin(), tokens.end() - std::ptrdiff_t(val)), a.shard_tokens);
  if (val > 0) write_shards(a.out, "val", std::vector<uint16_t>(tokens.end() - std::ptrdiff_t(val), tokens.end()), a.shard_tokens);
}

}  // namespace

void add_data_command(CLI::App& app) {
  CLI::App* data = app.add_subcommand("data", "Prepare training data");
  data->require_subcommand(1);
  auto a = std::make_shared<EncodeArguments>();
  CLI::App* cmd = data->add_subcommand("encode", "Turn text files into token shards (one token per byte)");
  cmd->add_option("--in", a->inputs, "Text files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", a->out, "Shard path prefix: PREFIX_train_000000.bin, PREFIX_val_000000.bin")
      ->required()
      ->check(output_path());
  cmd->add_option("--val-fraction", a->val_fraction, "Share of the text kept for validation")->check(CLI::Range(0.0, 0.5));
  cmd->add_option("--shard-tokens", a->shard_tokens, "Tokens per shard")->check(positive());
  cmd->callback([a] { encode(*a); });
}

}  // namespace axo::tools
