// The GEMM shapes calibration measures (calibrate/compute_bench.h).
#include "calibrate/compute_bench.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "calibrate/calibration.h"
#include "model/presets.h"

namespace axo::calibration {
namespace {

// A model's GEMM shapes join the grid once each: the grid's own 512^3, and a shape given twice, are
// measured once.
TEST(ComputeBench, GemmGridHasEachShapeOnce) {
  const std::vector<GemmShape> shapes = gemm_grid({256, 512}, {{512, 512, 512}, {4096, 1024, 512}, {4096, 1024, 512}});
  EXPECT_EQ(shapes.size(), 8u + 1u);
  EXPECT_EQ(shapes.back().m, 4096);
}

// A model's own shapes repeat (a square projection's forward and dX, GPT's MLP up forward and down
// dX): calibrate --model measures each once, one sample per shape in the profile.
TEST(ComputeBench, AModelsShapesAreMeasuredOnce) {
  const std::vector<GemmShape> model = model_gemm_shapes(load_model("gpt2-mini"));
  const std::vector<GemmShape> shapes = gemm_shapes(true, model);
  std::set<std::tuple<int64_t, int64_t, int64_t>> distinct;
  for (const GemmShape& s : shapes) EXPECT_TRUE(distinct.insert({s.m, s.n, s.k}).second) << s.m << "x" << s.n << "x" << s.k;
  std::set<std::tuple<int64_t, int64_t, int64_t>> from_model;
  for (const GemmShape& s : model) from_model.insert({s.m, s.n, s.k});
  EXPECT_LT(from_model.size(), model.size());  // the model does repeat shapes
  for (const auto& shape : from_model) EXPECT_TRUE(distinct.count(shape));
}

}  // namespace
}  // namespace axo::calibration
