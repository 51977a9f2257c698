// A pipeline stage's activations at its peak (see pipeline_in_flight.h).
#include "model/pipeline_in_flight.h"

#include <algorithm>

namespace axo {

namespace {

// Of the first `forwards` forwards of interleaved 1F1B, those that run chunk `chunk`: p of each
// chunk in turn, v chunks a round of p·v.
int64_t forwards_of_chunk(int64_t forwards, int64_t p, int64_t v, int64_t chunk) {
  return forwards / (p * v) * p + std::clamp(forwards % (p * v) - chunk * p, int64_t(0), p);
}

// The most interleaved 1F1B's forwards hold at once on stage s, each chunk weighing `weights[k]`:
// the warm-up's, then each step's forward i before backward i − W. The steady state repeats every
// p·v steps, and within a run of steps that add one chunk and take away another the held weight
// changes by the same amount each step: the largest is at a run's first or last step.
template <class Weight>
double interleaved_peak(const std::vector<Weight>& weights, int64_t p, int64_t m, int64_t s) {
  const int64_t v = int64_t(weights.size()), steps = m * v, warmup = one_f_one_b_warmup(p, v, m, s);
  auto weight = [&](int64_t chunk) { return double(weights[size_t(chunk)]); };
  if (std::all_of(weights.begin(), weights.end(), [&](Weight w) { return w == weights[0]; })) {
    return double(std::min(warmup + 1, steps)) * weight(0);  // equal chunks: the warm-up and one more
  }
  double held = 0;
  for (int64_t c = 0; c < v; ++c) held += weight(c) * double(forwards_of_chunk(warmup, p, v, c));
  double peak = held;
  const int64_t end = std::min(steps, warmup + p * v);
  for (int64_t i = warmup; i < end;) {
    const int64_t run = std::min({p - i % p, p - (i - warmup) % p, end - i});
    const double in = weight(i % (p * v) / p), out = weight(v - 1 - (i - warmup) % (p * v) / p);
    peak = std::max({peak, held + in, held + in + double(run - 1) * (in - out)});
    held += double(run) * (in - out);
    i += run;
  }
  return peak;
}

// Microbatches of each chunk where every chunk holds alike (all but the interleaved 1F1B steady
// state), and how many fewer the model's last chunk holds on this stage.
struct UniformHold {
  double each = 0, fewer_of_last = 0;
};
bool uniform_hold(int64_t p, int64_t m, int64_t v, int64_t s, const PipelineHold& hold, UniformHold& out) {
  if (p == 1) return out.each = 1, true;  // one stage: each microbatch through its chunks and back
  if (hold.schedule == Schedule::message_driven) {
    out.each = double(std::min(m, p));
    out.fewer_of_last = s == p - 1 ? out.each - 1 : 0;
    return true;
  }
  if (v == 1) return out.each = double(std::min(m, p - s)), true;
  if ((m == p && hold.all_forwards_first_at_m_equal_p) || one_f_one_b_warmup(p, v, m, s) == m * v) {
    return out.each = double(m), true;  // every forward before the first backward
  }
  return false;
}

template <class Weight>
double total(const std::vector<Weight>& weights) {
  double sum = 0;
  for (Weight w : weights) sum += double(w);
  return sum;
}

}  // namespace

double held_activation_bytes(const std::vector<double>& chunk_bytes, int64_t stages, int64_t microbatches,
                             int64_t stage, const PipelineHold& hold) {
  UniformHold uniform;
  if (!uniform_hold(stages, microbatches, int64_t(chunk_bytes.size()), stage, hold, uniform)) {
    return interleaved_peak(chunk_bytes, stages, microbatches, stage);
  }
  return uniform.each * total(chunk_bytes) - uniform.fewer_of_last * chunk_bytes.back();
}

HeldChunks held_chunks(const std::vector<int64_t>& chunk_layers, int64_t stages, int64_t microbatches, int64_t stage,
                       const PipelineHold& hold) {
  const int64_t v = int64_t(chunk_layers.size());
  UniformHold uniform;
  if (!uniform_hold(stages, microbatches, v, stage, hold, uniform)) {
    // After the warm-up every step holds W + 1 chunks (the warm-up's W fewer, and less).
    return {interleaved_peak(chunk_layers, stages, microbatches, stage),
            double(one_f_one_b_warmup(stages, v, microbatches, stage) + 1)};
  }
  return {uniform.each * total(chunk_layers) - uniform.fewer_of_last * double(chunk_layers.back()),
          uniform.each * double(v) - uniform.fewer_of_last};
}

std::vector<StageHold> stage_holds(const PipelineSplit& split, int64_t microbatches, const PipelineHold& hold) {
  std::vector<StageHold> holds;
  std::vector<int64_t> layers;
  for (int64_t s = 0; s < split.stages(); ++s) {
    layers.clear();
    for (int64_t k = 0; k < split.interleave(); ++k) layers.push_back(split.chunk(s, k).count());
    const auto [fewest, most] = std::minmax_element(layers.begin(), layers.end());
    holds.push_back({held_chunks(layers, split.stages(), microbatches, s, hold), *fewest, *most});
  }
  return holds;
}

}  // namespace axo
