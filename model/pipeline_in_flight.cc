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

// The most interleaved 1F1B's forwards hold at once on stage s: the warm-up's, then each step's
// forward i before backward i − W. The steady state repeats every p·v steps, and within a run of
// steps that add one chunk and take away another the held bytes change by the same amount each
// step: the largest is at a run's first or last step.
double interleaved_peak(const std::vector<double>& bytes, int64_t p, int64_t m, int64_t s) {
  const int64_t v = int64_t(bytes.size()), steps = m * v;
  const int64_t warmup = std::min(2 * (p - s - 1) + (v - 1) * p, steps);
  if (std::all_of(bytes.begin(), bytes.end(), [&](double b) { return b == bytes[0]; })) {
    return double(std::min(warmup + 1, steps)) * bytes[0];  // equal chunks: the warm-up and one more
  }
  double held = 0;
  for (int64_t c = 0; c < v; ++c) held += bytes[size_t(c)] * double(forwards_of_chunk(warmup, p, v, c));
  double peak = held;
  const int64_t end = std::min(steps, warmup + p * v);
  for (int64_t i = warmup; i < end;) {
    const int64_t run = std::min({p - i % p, p - (i - warmup) % p, end - i});
    const double in = bytes[size_t(i % (p * v) / p)];
    const double out = bytes[size_t(v - 1 - (i - warmup) % (p * v) / p)];
    peak = std::max({peak, held + in, held + in + double(run - 1) * (in - out)});
    held += double(run) * (in - out);
    i += run;
  }
  return peak;
}

double sum(const std::vector<double>& bytes, double times) {
  double total = 0;
  for (double b : bytes) total += times * b;
  return total;
}

}  // namespace

double held_activation_bytes(const std::vector<double>& chunk_bytes, int64_t stages, int64_t microbatches,
                             int64_t stage, const PipelineHold& hold) {
  const int64_t p = stages, m = microbatches, v = int64_t(chunk_bytes.size());
  if (hold.schedule == Schedule::message_driven) {
    const double held = double(std::min(m, p));
    if (stage < p - 1) return sum(chunk_bytes, held);
    return sum(chunk_bytes, held) - (held - 1) * chunk_bytes.back();
  }
  if (v == 1) return double(std::min(m, p - stage)) * chunk_bytes[0];
  if (m == p && hold.all_forwards_first_at_m_equal_p) return sum(chunk_bytes, double(m));
  return interleaved_peak(chunk_bytes, p, m, stage);
}

}  // namespace axo
