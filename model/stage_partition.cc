// The pipeline's layer split (see stage_partition.h).
#include "model/stage_partition.h"

#include <algorithm>
#include <cmath>

#include "model/error.h"

namespace axo {

namespace {

// Layers each chunk can take under a bottleneck cost `limit`: ⌊(limit − extra)/layer_cost⌋.
std::vector<int64_t> capacities(double limit, const std::vector<double>& extras, double layer_cost, int64_t layers) {
  std::vector<int64_t> caps;
  for (double extra : extras) {
    const double room = (limit - extra) / layer_cost;
    caps.push_back(std::min<int64_t>(layers, int64_t(std::floor(room * (1 + 1e-12) + 1e-9))));
  }
  return caps;
}

bool feasible(const std::vector<int64_t>& caps, int64_t layers) {
  int64_t total = 0;
  for (int64_t cap : caps) {
    if (cap < 1) return false;
    total += cap;
  }
  return total >= layers;
}

// The smallest bottleneck that fits: it is some n·layer_cost + extra, of the
// extras' distinct values (most chunks have none).
double smallest_bottleneck(int64_t layers, double layer_cost, const std::vector<double>& extras) {
  std::vector<double> distinct = extras;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<double> candidates;
  for (int64_t n = 1; n <= layers; ++n) {
    for (double extra : distinct) candidates.push_back(double(n) * layer_cost + extra);
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  auto fits = [&](double limit) { return feasible(capacities(limit, extras, layer_cost, layers), layers); };
  return *std::partition_point(candidates.begin(), candidates.end(), [&](double c) { return !fits(c); });
}

}  // namespace

PipelineSplit::PipelineSplit(std::vector<LayerRange> chunks, int64_t stages)
    : chunks_(std::move(chunks)), stages_(stages) {}

int64_t PipelineSplit::stage_layers(int64_t stage) const {
  int64_t layers = 0;
  for (int64_t c = 0; c < interleave(); ++c) layers += chunk(stage, c).count();
  return layers;
}

int64_t PipelineSplit::leading_layers(int64_t stage, int64_t per_chunk) const {
  int64_t layers = 0;
  for (int64_t c = 0; c < interleave(); ++c) layers += std::min(per_chunk, chunk(stage, c).count());
  return layers;
}

int64_t PipelineSplit::max_chunk_layers() const {
  int64_t most = 0;
  for (const LayerRange& chunk : chunks_) most = std::max(most, chunk.count());
  return most;
}

std::string recompute_layers_problem(const PipelineSplit& split, int64_t recompute_layers) {
  const int64_t most = split.max_chunk_layers();
  if (recompute_layers <= most) return "";
  const std::string head = "recompute_layers=" + std::to_string(recompute_layers) + " is more than the ";
  if (split.chunks().size() == 1) return head + std::to_string(most) + " layers of the model";
  return head + std::to_string(most) + " layers of the largest of the pipeline=" + std::to_string(split.stages()) +
         " × interleave=" + std::to_string(split.interleave()) + " chunks (it counts the layers of each chunk)";
}

int64_t PipelineSplit::max_stage_layers() const {
  int64_t most = 0;
  for (int64_t s = 0; s < stages_; ++s) most = std::max(most, stage_layers(s));
  return most;
}

std::string PipelineSplit::text() const {
  std::string out;
  for (int64_t s = 0; s < stages_; ++s) {
    if (s > 0) out += ",";
    for (int64_t c = 0; c < interleave(); ++c) out += (c > 0 ? "+" : "") + std::to_string(chunk(s, c).count());
  }
  return out;
}

std::vector<LayerRange> partition_layers(int64_t layers, double layer_cost, double first_extra, double last_extra,
                                         int64_t chunks) {
  if (chunks < 1 || chunks > layers) {
    throw InputError(std::to_string(chunks) + " pipeline chunks for a model of " + std::to_string(layers) +
                     " layers: each chunk needs at least one layer");
  }
  std::vector<double> extras(size_t(chunks), 0.0);
  extras.front() += first_extra;
  extras.back() += last_extra;
  std::vector<int64_t> counts = capacities(smallest_bottleneck(layers, layer_cost, extras), extras, layer_cost, layers);
  // Take the surplus from the costliest chunks, later ones first on ties.
  int64_t surplus = -layers;
  for (int64_t count : counts) surplus += count;
  for (; surplus > 0; --surplus) {
    size_t costliest = 0;
    double worst = -1;
    for (size_t k = 0; k < counts.size(); ++k) {
      const double cost = double(counts[k]) * layer_cost + extras[k];
      if (counts[k] > 1 && cost >= worst) worst = cost, costliest = k;
    }
    --counts[costliest];
  }
  std::vector<LayerRange> ranges;
  int64_t begin = 0;
  for (int64_t count : counts) ranges.push_back({begin, begin + count}), begin += count;
  return ranges;
}

SplitWeights split_weights(const TransformerSpec& spec) {
  const double s = double(spec.seq_len), h = double(spec.hidden);
  return {2.0 * s * double(spec.linear_weights_per_layer()) + 4.0 * s * s * h, 2.0 * s * h * double(spec.vocab)};
}

PipelineSplit split_pipeline(const TransformerSpec& spec, int64_t stages, int64_t interleave) {
  const SplitWeights weights = split_weights(spec);
  if (stages < 1 || interleave < 1 || stages * interleave > spec.layers) {
    throw InputError("pipeline=" + std::to_string(stages) + " × interleave=" + std::to_string(interleave) +
                     " chunks for layers=" + std::to_string(spec.layers) + ": each chunk needs at least one layer");
  }
  return PipelineSplit(partition_layers(spec.layers, weights.layer, 0.0, weights.head, stages * interleave), stages);
}

}  // namespace axo
