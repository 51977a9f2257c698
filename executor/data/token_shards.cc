// Token shards and batches (see token_shards.h).
#include "executor/data/token_shards.h"

#include <glob.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "model/atomic_file.h"
#include "model/error.h"
#include "model/input_file.h"

namespace axo {

namespace {
constexpr int32_t kShardMagic = 20240520;
}

void write_token_shard(const std::string& path, const std::vector<uint16_t>& tokens) {
  int32_t header[256] = {};
  header[0] = kShardMagic, header[1] = 1, header[2] = int32_t(tokens.size());
  std::string bytes(sizeof header + tokens.size() * 2, '\0');
  std::memcpy(bytes.data(), header, sizeof header);
  std::memcpy(bytes.data() + sizeof header, tokens.data(), tokens.size() * 2);
  write_file_atomically(path, bytes);
}

std::vector<uint16_t> read_token_shard(const std::string& path) {
  std::ifstream in = open_input_file(path, "token shard");
  int32_t header[256];
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) {
    throw InputError(path + ": too short for a token shard header (1024 bytes)");
  }
  if (header[0] != kShardMagic) {
    throw InputError(path + ": not a token shard (magic " + std::to_string(header[0]) + ", expected " +
                     std::to_string(kShardMagic) + ")");
  }
  if (header[1] != 1) throw InputError(path + ": token shard version " + std::to_string(header[1]) + " (expected 1)");
  if (header[2] < 0) throw InputError(path + ": negative token count");
  // Check the size before allocating: a damaged header must not ask for gigabytes.
  in.seekg(0, std::ios::end);
  const std::streamoff available = in.tellg() - std::streamoff(sizeof header);
  if (available < std::streamoff(header[2]) * 2) {
    throw InputError(path + ": truncated: the header promises " + std::to_string(header[2]) + " tokens, the file holds " +
                     std::to_string(available / 2));
  }
  if (available > std::streamoff(header[2]) * 2) {  // as llm.c's loader: a header and a file that disagree
    throw InputError(path + ": the header promises " + std::to_string(header[2]) + " tokens, the file holds " +
                     std::to_string(available) + " bytes after it, not " + std::to_string(2 * int64_t(header[2])));
  }
  in.seekg(sizeof header);
  std::vector<uint16_t> tokens(static_cast<size_t>(header[2]));
  if (!in.read(reinterpret_cast<char*>(tokens.data()), std::streamsize(tokens.size() * 2))) {
    throw InputError(path + ": truncated: the header promises " + std::to_string(header[2]) + " tokens");
  }
  return tokens;
}

std::vector<std::string> token_shard_paths(const std::string& pattern) {
  std::vector<std::string> paths;
  glob_t matches{};
  const int status = ::glob(pattern.c_str(), 0, nullptr, &matches);
  if (status == 0) paths.assign(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
  globfree(&matches);
  std::sort(paths.begin(), paths.end());
  return paths;
}

TokenStream::TokenStream(const std::string& pattern, int rank, int world)
    : paths_(token_shard_paths(pattern)), pattern_(pattern), rank_(rank), world_(world) {
  if (paths_.empty()) throw InputError("'" + pattern + "': no token shard matches");
  for (const std::string& path : paths_) {
    const std::vector<uint16_t> shard = read_token_shard(path);
    tokens_.insert(tokens_.end(), shard.begin(), shard.end());
    shard_ends_.push_back(tokens_.size());
  }
}

std::string TokenStream::token_outside(int vocab) const {
  const auto bad = std::find_if(tokens_.begin(), tokens_.end(), [&](uint16_t token) { return token >= vocab; });
  if (bad == tokens_.end()) return "";
  const size_t at = size_t(bad - tokens_.begin());
  const size_t shard = size_t(std::upper_bound(shard_ends_.begin(), shard_ends_.end(), at) - shard_ends_.begin());
  const size_t start = shard == 0 ? 0 : shard_ends_[shard - 1];
  return "token " + std::to_string(*bad) + " (" + paths_[shard] + ", position " + std::to_string(at - start) + ")";
}

void TokenStream::check_holds_batch(int64_t B, int64_t T) const {
  const double global_span = double(B) * double(T) * double(world_);  // beyond int64 for a --batch of 2^60
  if (double(tokens_.size()) < global_span + 1) {
    throw InputError("'" + pattern_ + "' holds " + std::to_string(tokens_.size()) + " tokens, fewer than one batch of " +
                     std::to_string(B * world_) + " sequences of " + std::to_string(T) + " + 1 = " +
                     std::to_string(int64_t(global_span) + 1));
  }
}

void TokenStream::next_batch(int64_t B, int64_t T, int* inputs, int* targets) {
  const int64_t span = B * T, global_span = span * world_;
  check_holds_batch(B, T);
  // Wrap at whole batches of all ranks, as one rank reading B·world sequences does.
  const int64_t batches = (int64_t(tokens_.size()) - 1) / global_span;
  const int64_t start = (window_ / world_ % batches) * global_span + rank_ * span;
  for (int64_t i = 0; i < span; ++i) {
    inputs[i] = tokens_[size_t(start + i)];
    targets[i] = tokens_[size_t(start + i + 1)];
  }
  window_ += world_;
}

std::vector<uint16_t> encode_bytes(const std::string& text) {
  std::vector<uint16_t> tokens(text.size());
  for (size_t i = 0; i < text.size(); ++i) tokens[i] = static_cast<unsigned char>(text[i]);
  return tokens;
}

}  // namespace axo
