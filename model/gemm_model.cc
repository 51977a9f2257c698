// GEMM time: roofline, corrected by measured samples (see gemm_model.h).
#include "model/gemm_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace axo {

namespace {

// The output tiles a GEMM kernel computes, one per SM per wave (gemm_model.h).
constexpr std::pair<double, double> kGemmTiles[] = {{128, 128}, {128, 256}, {256, 128}};
constexpr double kSmallestTileDim = 128;  // of every tile above, in m and in n

// Split-K: a GEMM whose output tiles cannot fill one wave of SMs splits its
// k loop over up to kMaxSplitK CTAs per tile, each at least kMinSplitDepth deep
// (CUTLASS's split-K, cuBLAS's heuristics for small m·n and long k); the
// partial sums' reduction is not priced (m·n·split fp32 words, well under 1%).
constexpr double kMaxSplitK = 8;
constexpr double kMinSplitDepth = 1024;

double most_useful_split(double tiles, int64_t sm_count, double k) {
  if (tiles >= double(sm_count)) return 1;
  return std::clamp(std::floor(k / kMinSplitDepth), 1.0, kMaxSplitK);
}

// An output dimension under one tile computes the whole (smallest) tile, whose padding
// gemm_wave_efficiency charges: its d / (d + d½) is the tile's, or the two would charge the missing
// rows twice and a 1-row GEMM would take longer than a 128-row one (time ~ 1/m).
double tile_filled(const MachineProfile& machine, double d) {
  return machine.gemm_sm_count > 0 ? std::max(d, kSmallestTileDim) : d;
}

}  // namespace

double gemm_wave_efficiency(int64_t sm_count, double m, double n, double k) {
  if (sm_count <= 0) return 1.0;
  const double slots = double(sm_count);
  double best = 0;
  for (const auto& [tile_m, tile_n] : kGemmTiles) {
    const double tiles = std::ceil(m / tile_m) * std::ceil(n / tile_n);
    const double max_split = most_useful_split(tiles, sm_count, k);
    for (double split = 1; split <= max_split; ++split) {
      const double waves = std::ceil(tiles * split / slots);
      best = std::max(best, m * n * split / (waves * slots * tile_m * tile_n));
    }
  }
  return best;
}

double gemm_roofline_seconds(const MachineProfile& machine, Precision precision, double m,
                             double n, double k) {
  const double d_half = machine.gemm_half_efficiency_dim;
  const double k_half = precision == Precision::fp8 ? 2 * d_half : d_half;  // gemm_model.h
  const double tm = tile_filled(machine, m), tn = tile_filled(machine, n);
  const double fill = (tm / (tm + d_half)) * (tn / (tn + d_half)) * (k / (k + k_half)) *
                      gemm_wave_efficiency(machine.gemm_sm_count, m, n, k);
  const double flops_per_s = machine.peak_tflops(precision) * 1e12 * machine.gemm_max_efficiency * fill;
  const double bytes = (m * k + k * n + m * n) * bytes_per_element(precision);
  const double compute_s = 2.0 * m * n * k / flops_per_s;
  const double memory_s = bytes / (machine.hbm_bandwidth_GBps * 1e9);
  return std::max(compute_s, memory_s) + machine.kernel_launch_us * 1e-6;
}

double gemm_seconds(const MachineProfile& machine, Precision precision, double m, double n,
                    double k) {
  const double roofline = gemm_roofline_seconds(machine, precision, m, n, k);
  double weight_sum = 0, ratio_sum = 0;
  double best_tflops = machine.peak_tflops(precision) * machine.gemm_max_efficiency;
  for (const GemmSample& s : machine.gemm_table) {
    if (s.precision != precision) continue;
    const double dm = std::log2(m / double(s.m));
    const double dn = std::log2(n / double(s.n));
    const double dk = std::log2(k / double(s.k));
    const double distance2 = dm * dm + dn * dn + dk * dk;
    const double measured = 2.0 * double(s.m) * double(s.n) * double(s.k) / (s.tflops * 1e12);
    const double ratio =
        measured / gemm_roofline_seconds(machine, precision, double(s.m), double(s.n), double(s.k));
    if (distance2 < 1e-12) return roofline * ratio;
    const double weight = 1.0 / (distance2 * distance2);
    weight_sum += weight;
    ratio_sum += weight * ratio;
    best_tflops = std::max(best_tflops, s.tflops);
  }
  if (weight_sum == 0) return roofline;
  // A ratio carried from other shapes never prices a GEMM above the best rate anything gives: the
  // profile's whole-wave rate or its best sample (a small launch-bound sample's ratio would).
  return std::max(roofline * ratio_sum / weight_sum, 2.0 * m * n * k / (best_tflops * 1e12));
}

}  // namespace axo
