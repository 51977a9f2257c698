// GEMM time: roofline shape, and measured samples reproduced and interpolated.
#include "model/gemm_model.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(GemmModel, LargeGemmsApproachMaxEfficiency) {
  const MachineProfile m = load_machine("selene");
  const double n = 16384;
  const double seconds = gemm_seconds(m, Precision::fp16, n, n, n);
  const double tflops = 2 * n * n * n / seconds / 1e12;
  EXPECT_GT(tflops, 0.9 * m.gemm_max_efficiency * 312);
  EXPECT_LE(tflops, m.gemm_max_efficiency * 312);
}

TEST(GemmModel, SmallDimensionsAreLessEfficient) {
  const MachineProfile m = load_machine("selene");
  auto rate = [&](double mm, double nn, double kk) {
    return 2 * mm * nn * kk / gemm_seconds(m, Precision::fp16, mm, nn, kk);
  };
  EXPECT_LT(rate(8192, 8192, 64), rate(8192, 8192, 8192));
  EXPECT_LT(rate(16, 8192, 8192), rate(8192, 8192, 8192));
}

// A GEMM no wider than one tile computes the whole tile: it takes no longer for fewer rows or
// columns (the small-dimension factor and the tile's padding charged the missing ones twice: a
// 1-row GEMM on an H100 took 47x the time of a 128-row one), and a GEMM's time never falls as
// m or n grows to a tile.
TEST(GemmModel, FewerRowsThanATileTakeNoLonger) {
  const MachineProfile h100 = load_machine("dgx-h100");
  double previous = 0;
  for (double rows : {1.0, 2.0, 8.0, 64.0, 96.0, 128.0}) {
    const double m_seconds = gemm_seconds(h100, Precision::bf16, rows, 2304, 768);
    const double n_seconds = gemm_seconds(h100, Precision::bf16, 2304, rows, 768);
    EXPECT_GE(m_seconds, previous * (1 - 1e-12)) << rows;
    EXPECT_DOUBLE_EQ(n_seconds, gemm_seconds(h100, Precision::bf16, rows, 2304, 768)) << rows;
    EXPECT_LE(m_seconds, gemm_seconds(h100, Precision::bf16, 128, 2304, 768) * (1 + 1e-12)) << rows;
    previous = m_seconds;
  }
  // Without SMs (a CPU profile) no tile pads anything: compute-bound, time = 2nk (m + d½) / rate, so
  // 128 rows take (128 + d½) / (1 + d½) of one row's time (a padded row would take 1/128 of 128's).
  MachineProfile cpu = h100;
  cpu.gemm_sm_count = 0, cpu.hbm_bandwidth_GBps = 1e12, cpu.kernel_launch_us = 0;
  const double d = cpu.gemm_half_efficiency_dim;
  EXPECT_NEAR(gemm_roofline_seconds(cpu, Precision::bf16, 128, 2304, 768) /
                  gemm_roofline_seconds(cpu, Precision::bf16, 1, 2304, 768),
              (128 + d) / (1 + d), 1e-9);
}

// Wave quantization on A100's 108 SMs: 4096 x 1792 is 448 tiles of 128x128,
// 4.15 waves run as 5 (the 128x256 and 256x128 tiles: 224 tiles, 3 waves).
TEST(GemmModel, ALastPartialWaveIdlesTheRestOfTheSms) {
  EXPECT_NEAR(gemm_wave_efficiency(108, 4096, 1792, 4096), 4096.0 * 1792 / (5 * 108 * 128 * 128), 1e-12);
  EXPECT_DOUBLE_EQ(gemm_wave_efficiency(108, 108 * 128, 128, 4096), 1.0);  // one full wave
  EXPECT_DOUBLE_EQ(gemm_wave_efficiency(0, 4096, 1792, 4096), 1.0);        // no SMs: no quantization
  // The same output on H100's 132 SMs: 448 tiles in 4 waves, 0.85 of the slots busy.
  EXPECT_GT(gemm_wave_efficiency(132, 4096, 1792, 4096), gemm_wave_efficiency(108, 4096, 1792, 4096));
  // The time follows: per FLOP, 1792 columns run over 10% slower than 2048
  // (0.83 of the slots busy against 0.95: 512 tiles of 128x128 in 5 waves).
  const MachineProfile a100 = load_machine("selene");
  auto rate = [&](double n) { return 2 * 4096 * n * 4096 / gemm_seconds(a100, Precision::bf16, 4096, n, 4096); };
  EXPECT_LT(rate(1792), 0.9 * rate(2048));
}

// A few output tiles and a long k: k is split so the tiles fill the SMs
// (a dW GEMM of a small layer over many tokens).
TEST(GemmModel, ALongKIsSplitWhenTheTilesCannotFillAWave) {
  // 512 x 512: 16 tiles of 128x128 on 108 SMs; k = 65536 may split up to 8
  // ways, and 6 fill the most: 96 CTAs in one wave (8 would be 128 in two).
  EXPECT_NEAR(gemm_wave_efficiency(108, 512, 512, 65536), 16.0 * 6 / 108, 1e-12);
  // The same output with k = 1024 cannot split: 16 of 108 SMs busy.
  EXPECT_NEAR(gemm_wave_efficiency(108, 512, 512, 1024), 16.0 / 108, 1e-12);
}

// fp8 at twice bf16's peak needs twice the k to amortize a tile's fixed cost:
// with k = 2048 on H100, fp8's GEMM takes about half bf16's time times
// (2048 + 256) / (2048 + 128), and nearer half as k grows.
TEST(GemmModel, Fp8NeedsTwiceTheKToAmortizeATile) {
  const MachineProfile h100 = load_machine("dgx-h100");
  const double d = h100.gemm_half_efficiency_dim;
  auto ratio = [&](double k) {
    return gemm_roofline_seconds(h100, Precision::fp8, 8192, 8192, k) /
           gemm_roofline_seconds(h100, Precision::bf16, 8192, 8192, k);
  };
  const double launch = h100.kernel_launch_us * 1e-6;  // the same for both
  const double fp8 = gemm_roofline_seconds(h100, Precision::fp8, 8192, 8192, 2048) - launch;
  const double bf16 = gemm_roofline_seconds(h100, Precision::bf16, 8192, 8192, 2048) - launch;
  const double peaks = h100.peak_tflops(Precision::bf16) / h100.peak_tflops(Precision::fp8);  // 989 / 1979
  EXPECT_NEAR(fp8 / bf16, peaks * (2048 + 2 * d) / (2048 + d), 1e-12);
  EXPECT_GT(ratio(2048), ratio(16384));
  EXPECT_GT(ratio(16384), 0.5);
}

TEST(GemmModel, SamplesAreReproducedAndInterpolated) {
  MachineProfile m = load_machine("selene");
  m.gemm_table = {{Precision::fp16, 1024, 1024, 1024, 100}, {Precision::fp16, 4096, 4096, 4096, 200}};
  const double at_sample = gemm_seconds(m, Precision::fp16, 1024, 1024, 1024);
  EXPECT_NEAR(2.0 * 1024 * 1024 * 1024 / at_sample / 1e12, 100, 1e-9);
  const double mid = 2048;
  const double rate = 2 * mid * mid * mid / gemm_seconds(m, Precision::fp16, mid, mid, mid) / 1e12;
  EXPECT_GT(rate, 100);
  EXPECT_LT(rate, 200);
  // Another precision has no samples: plain roofline.
  EXPECT_DOUBLE_EQ(gemm_seconds(m, Precision::fp32, 1024, 1024, 1024),
                   gemm_roofline_seconds(m, Precision::fp32, 1024, 1024, 1024));
}

// One small launch-bound sample, slower than its roofline but less so than the roofline expects,
// would carry a ratio below 1 to every shape: large GEMMs stay at the profile's whole-wave rate.
TEST(GemmModel, CarriedRatioNeverBeatsTheBestRate) {
  MachineProfile m = load_machine("selene");  // bf16 312 TF x 0.86
  m.gemm_table = {{Precision::bf16, 128, 128, 128, 50}};
  const double big = 16384;
  ASSERT_LT(2.0 * 128 * 128 * 128 / (50e12) / gemm_roofline_seconds(m, Precision::bf16, 128, 128, 128), 1);
  const double rate = 2 * big * big * big / gemm_seconds(m, Precision::bf16, big, big, big) / 1e12;
  EXPECT_NEAR(rate, 312 * 0.86, 1e-6);
  // A sample faster than max_efficiency (a calibrated profile's best) raises the ceiling to it.
  m.gemm_table.push_back({Precision::bf16, 8192, 8192, 8192, 300});
  EXPECT_NEAR(2 * big * big * big / gemm_seconds(m, Precision::bf16, big, big, big) / 1e12, 300, 1e-6);
}

}  // namespace
}  // namespace axo
