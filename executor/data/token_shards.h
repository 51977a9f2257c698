// llm.c token shards and the batches a rank reads from them.
//
// A shard is a 256 × int32 header (magic 20240520, version 1, token count)
// followed by uint16 tokens. A batch of B sequences of T reads B·T+1
// consecutive tokens: sequence b's inputs are tokens [bT, bT+T) and its
// targets [bT+1, bT+T]. Rank r of W reads the r-th of every W consecutive
// batch windows, so ranks never read the same tokens; the stream wraps
// around at the end of the data at whole batches of all W ranks, so W ranks
// read what one rank reading W·B sequences reads, wrapped or not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace axo {

void write_token_shard(const std::string& path, const std::vector<uint16_t>& tokens);
// InputError naming the file on a wrong header or a short file.
std::vector<uint16_t> read_token_shard(const std::string& path);

// The files `pattern` (a glob) matches, in name order; none when it matches nothing.
std::vector<std::string> token_shard_paths(const std::string& pattern);

class TokenStream {
 public:
  // Every shard matching `pattern` (glob), in name order.
  TokenStream(const std::string& pattern, int rank = 0, int world = 1);
  // Fills inputs[B·T] and targets[B·T]; InputError if the data is smaller than one batch of all ranks.
  void next_batch(int64_t B, int64_t T, int* inputs, int* targets);
  // InputError if the data is smaller than one batch of B sequences of T tokens on every rank
  // (checked before the batch's buffers are allocated: a --batch beyond any memory fails here).
  void check_holds_batch(int64_t B, int64_t T) const;
  int64_t position() const { return window_; }  // batch windows read so far (all ranks)
  void seek(int64_t window) { window_ = window; }
  int64_t tokens() const { return int64_t(tokens_.size()); }
  // The first token >= vocab, as "token N (PATH, position K)"; empty when there is none.
  std::string token_outside(int vocab) const;

 private:
  std::vector<uint16_t> tokens_;
  std::vector<std::string> paths_;   // the shards, in order
  std::vector<size_t> shard_ends_;   // where each shard's tokens end in tokens_
  std::string pattern_;
  int rank_, world_;
  int64_t window_ = 0;
};

// Byte-level tokenizer: one token per byte (vocabulary 256).
std::vector<uint16_t> encode_bytes(const std::string& text);

}  // namespace axo
