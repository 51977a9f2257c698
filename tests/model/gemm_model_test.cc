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

}  // namespace
}  // namespace axo
