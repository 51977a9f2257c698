// `axo data encode`: text files into llm.c token shards (byte-level tokens),
// replacing the shards an earlier encode left under the same prefix.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "executor/data/token_shards.h"
#include "model/error.h"
#include "model/input_file.h"
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

// The shard names the encoder writes, one place: PREFIX + "_train_000000.bin", "_val_000001.bin", ...
std::string shard_suffix(const std::string& split, int64_t index) {
  char name[64];
  std::snprintf(name, sizeof name, "_%s_%06lld.bin", split.c_str(), (long long)index);
  return name;
}

// Whether `name` (a file name) is one the encoder writes for the prefix's file name `stem`:
// stem, then _train_ or _val_, then six digits or more, then .bin.
bool is_shard_name(const std::string& name, const std::string& stem) {
  if (name.compare(0, stem.size(), stem) != 0) return false;
  for (const char* split : {"train", "val"}) {
    const std::string head = stem + "_" + split + "_", tail = ".bin";
    if (name.size() < head.size() + 6 + tail.size() || name.compare(0, head.size(), head) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0) {
      continue;
    }
    const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    if (std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) return true;
  }
  return false;
}

// Removes the shards an earlier encode wrote with `prefix` (files named as is_shard_name, nothing
// else), so a glob over the prefix reads the new text alone; says how many. One of them being an
// --in file is a usage error: it would be deleted and overwritten.
void remove_old_shards(const std::string& prefix, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(prefix).parent_path().empty() ? fs::path(".") : fs::path(prefix).parent_path();
  const std::string stem = fs::path(prefix).filename().string();
  std::vector<fs::path> old;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.is_regular_file() && is_shard_name(entry.path().filename().string(), stem)) old.push_back(entry.path());
  }
  for (const fs::path& path : old) {
    for (const std::string& input : inputs) {
      if (same_file(input, path.string())) {
        throw InputError("--in " + input + " is a shard of --out " + prefix + ", which encoding replaces: give --out "
                         "another prefix");
      }
    }
  }
  for (const fs::path& path : old) fs::remove(path);
  if (!old.empty()) {
    std::printf("removed %zu old shard%s of %s (%s_train_*.bin, %s_val_*.bin)\n", old.size(),
                old.size() == 1 ? "" : "s", prefix.c_str(), prefix.c_str(), prefix.c_str());
  }
}

void write_shards(const std::string& prefix, const std::string& split, const std::vector<uint16_t>& tokens,
                  int64_t per_shard) {
  for (int64_t start = 0, index = 0; start < int64_t(tokens.size()); start += per_shard, ++index) {
    const int64_t end = std::min<int64_t>(start + per_shard, int64_t(tokens.size()));
    const std::string path = prefix + shard_suffix(split, index);
    write_token_shard(path, std::vector<uint16_t>(tokens.begin() + start, tokens.begin() + end));
    std::printf("wrote %s: %lld tokens\n", path.c_str(), (long long)(end - start));
  }
}

void encode(const EncodeArguments& a) {
  std::string text;
  for (const std::string& path : a.inputs) {
    text += read_input_file(path, "text file");
  }
  const std::vector<uint16_t> tokens = encode_bytes(text);
  const size_t val = size_t(double(tokens.size()) * a.val_fraction);
  if (tokens.size() - val < 2) {
    std::string named;
    for (const std::string& path : a.inputs) named += " " + path;
    throw InputError("--in" + named + ": too little text to make a training shard (" + std::to_string(tokens.size()) +
                     " bytes)");
  }
  remove_old_shards(a.out, a.inputs);
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
      ->check(output_prefix());
  cmd->add_option("--val-fraction", a->val_fraction, "Share of the text kept for validation")->check(non_negative())->check(CLI::Range(0.0, 0.5));
  cmd->add_option("--shard-tokens", a->shard_tokens, "Tokens per shard")->check(positive());
  cmd->callback([a] { encode(*a); });
}

}  // namespace axo::tools
