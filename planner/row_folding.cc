// Folding rows whose numbers are all equal (see row_folding.h).
#include "planner/row_folding.h"

#include <algorithm>
#include <cmath>

namespace axo {

namespace {

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b));
}

std::string on_off(bool value) { return value ? "on" : "off"; }

}  // namespace

bool same_numbers(const Breakdown& a, const Breakdown& b) {
  if (!close(a.iter_time, b.iter_time)) return false;  // most pairs differ here
  const auto ta = components(a), tb = components(b);
  const auto ma = memory_parts(a.memory), mb = memory_parts(b.memory);
  for (size_t i = 0; i < ta.size(); ++i) {
    if (!close(ta[i], tb[i])) return false;
  }
  for (size_t i = 0; i < ma.size(); ++i) {
    if (!close(ma[i], mb[i])) return false;
  }
  return close(a.tflops_per_gpu, b.tflops_per_gpu) &&
         close(a.pct_peak, b.pct_peak) && a.fits == b.fits;
}

std::string variant_text(const ParallelConfig& shown, const ParallelConfig& v) {
  std::string text;
  auto add = [&](bool differs, const std::string& field, const std::string& value) {
    if (differs) text += (text.empty() ? "" : ",") + field + "=" + value;
  };
  add(v.pipeline != shown.pipeline, "pipeline", std::to_string(v.pipeline));
  add(v.data != shown.data, "data", std::to_string(v.data));
  add(v.x != shown.x, "x", std::to_string(v.x));
  add(v.y != shown.y, "y", std::to_string(v.y));
  add(v.z != shown.z, "z", std::to_string(v.z));
  add(v.microbatch != shown.microbatch, "microbatch", std::to_string(v.microbatch));
  add(v.recompute != shown.recompute, "recompute", to_string(v.recompute));
  add(v.offload != shown.offload, "offload", on_off(v.offload));
  add(v.overlap != shown.overlap, "overlap", on_off(v.overlap));
  add(v.sequence_parallel != shown.sequence_parallel, "sequence_parallel", on_off(v.sequence_parallel));
  add(v.interleave != shown.interleave, "interleave", std::to_string(v.interleave));
  add(v.order != shown.order, "order", v.order_string());
  return text;
}

std::string variants_text(const ParallelConfig& shown, const std::vector<ParallelConfig>& variants) {
  std::string text;
  for (const ParallelConfig& v : variants) text += (text.empty() ? "" : "; ") + variant_text(shown, v);
  return text;
}

}  // namespace axo
