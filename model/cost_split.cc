// The remembered pipeline split (see cost_split.h).
#include "model/cost_split.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace axo {

namespace {

// What split_pipeline reads from the model, and the two sizes.
using SplitKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

SplitKey key_of(const TransformerSpec& spec, int64_t stages, int64_t interleave) {
  return {spec.layers, spec.seq_len, spec.hidden, spec.vocab, spec.linear_weights_per_layer(), stages, interleave};
}

// Shared by every thread, guarded by a mutex; entries are never removed.
const RememberedSplit& shared_split(const SplitKey& key, const TransformerSpec& spec, int64_t stages,
                                  int64_t interleave) {
  static std::mutex mutex;
  static std::map<SplitKey, std::unique_ptr<const RememberedSplit>> splits;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto found = splits.find(key); found != splits.end()) return *found->second;
  }
  PipelineSplit split = split_pipeline(spec, stages, interleave);
  std::vector<int64_t> layers = layers_by_stage(split);
  auto remembered = std::make_unique<const RememberedSplit>(RememberedSplit{std::move(split), std::move(layers)});
  const std::lock_guard<std::mutex> lock(mutex);
  return *splits.emplace(key, std::move(remembered)).first->second;
}

}  // namespace

std::vector<int64_t> layers_by_stage(const PipelineSplit& split) {
  std::vector<int64_t> layers;
  for (int64_t s = 0; s < split.stages(); ++s) layers.push_back(split.stage_layers(s));
  return layers;
}

const RememberedSplit& remembered_split(const TransformerSpec& spec, int64_t stages, int64_t interleave) {
  const SplitKey key = key_of(spec, stages, interleave);
  thread_local SplitKey last_key{};
  thread_local const RememberedSplit* last = nullptr;
  if (last && key == last_key) return *last;
  last = &shared_split(key, spec, stages, interleave);
  last_key = key;
  return *last;
}

}  // namespace axo
