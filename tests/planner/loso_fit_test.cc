// The fit and leave-one-source-out on synthetic cases whose answers are known
// by hand.
#include "planner/loso_fit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace axo {
namespace {

// A case whose prediction is work / theta[0]: "a GEMM efficiency".
FitCase efficiency_case(const std::string& source, double work, double measured) {
  return {source, measured, [work](const std::vector<double>& theta) { return work / theta[0]; }};
}

const std::vector<FitParameter> kEfficiency = {{"efficiency", 0.1, 1.0}};

TEST(LosoFit, OneParameterFitIsTheGeometricMeanOfTheRatios) {
  // ln(work/(θ·measured))² is least at ln θ = mean of ln(work/measured):
  // source a says θ = 0.8 (twice), source b says θ = 0.5.
  const std::vector<FitCase> cases = {efficiency_case("a", 8, 10), efficiency_case("a", 4, 5),
                                      efficiency_case("b", 5, 10)};
  const LosoResult r = leave_one_source_out(kEfficiency, {0.6}, cases);
  EXPECT_NEAR(r.theta_all[0], std::exp((2 * std::log(0.8) + std::log(0.5)) / 3), 1e-4);
  ASSERT_EQ(r.sources.size(), 2u);
  // Without a, the fit is b's 0.5: a's runs (true 0.8) are predicted 0.8/0.5 − 1 = +60% slow.
  EXPECT_EQ(r.sources[0].source, "a");
  ASSERT_EQ(r.sources[0].loso_pct.size(), 2u);
  EXPECT_NEAR(r.sources[0].theta_without[0], 0.5, 1e-4);
  EXPECT_NEAR(r.sources[0].loso_pct[0], 60.0, 0.05);
  EXPECT_NEAR(r.sources[0].loso_pct[1], 60.0, 0.05);
  // Without b, the fit is 0.8: b (true 0.5) is predicted 0.5/0.8 − 1 = −37.5%.
  EXPECT_NEAR(r.sources[1].theta_without[0], 0.8, 1e-4);
  ASSERT_EQ(r.sources[1].loso_pct.size(), 1u);
  EXPECT_NEAR(r.sources[1].loso_pct[0], -37.5, 0.05);
  // In sample, both sources are off by the compromise.
  const double theta = r.theta_all[0];
  EXPECT_NEAR(r.sources[1].in_sample_pct[0], 100 * (0.5 / theta - 1), 0.05);
}

// Each case's leave-one-source-out error in the cases' own order, sources
// interleaved: a, b, a gives +60%, -37.5%, +60% (as above).
TEST(LosoFit, ErrorsByCaseFollowTheCasesOrder) {
  const std::vector<FitCase> cases = {efficiency_case("a", 8, 10), efficiency_case("b", 5, 10),
                                      efficiency_case("a", 4, 5)};
  const LosoResult r = leave_one_source_out(kEfficiency, {0.6}, cases);
  ASSERT_EQ(r.loso_by_case.size(), 3u);
  EXPECT_NEAR(r.loso_by_case[0], 60.0, 0.05);
  EXPECT_NEAR(r.loso_by_case[1], -37.5, 0.05);
  EXPECT_NEAR(r.loso_by_case[2], 60.0, 0.05);
}

TEST(LosoFit, TwoParametersAreRecoveredFromExactData) {
  // predicted = f/a + m/b (a GEMM part and a memory-bound part) with a = 0.7, b = 0.45.
  std::vector<FitCase> cases;
  for (const std::pair<double, double> parts : {std::pair{10.0, 1.0}, {3.0, 4.0}, {1.0, 0.5}, {6.0, 6.0}}) {
    const double f = parts.first, m = parts.second;
    cases.push_back({"s", f / 0.7 + m / 0.45, [f, m](const std::vector<double>& t) { return f / t[0] + m / t[1]; }});
  }
  std::vector<const FitCase*> pointers;
  for (const FitCase& c : cases) pointers.push_back(&c);
  const std::vector<double> theta =
      fit_parameters({{"a", 0.3, 1.0}, {"b", 0.2, 1.0}}, {0.84, 0.8}, pointers);
  EXPECT_NEAR(theta[0], 0.7, 1e-3);
  EXPECT_NEAR(theta[1], 0.45, 1e-3);
  for (double e : errors_pct(pointers, theta)) EXPECT_NEAR(e, 0, 0.05);
}

TEST(LosoFit, StaysInsideTheBounds) {
  const std::vector<FitCase> cases = {efficiency_case("a", 2, 1)};  // wants θ = 2
  std::vector<const FitCase*> pointers = {&cases[0]};
  EXPECT_DOUBLE_EQ(fit_parameters(kEfficiency, {0.5}, pointers)[0], 1.0);
}

TEST(LosoFit, ASingleSourceHasNoLosoError) {
  const std::vector<FitCase> cases = {efficiency_case("only", 8, 10), efficiency_case("only", 4, 5)};
  const LosoResult r = leave_one_source_out(kEfficiency, {0.6}, cases);
  ASSERT_EQ(r.sources.size(), 1u);
  EXPECT_TRUE(r.sources[0].loso_pct.empty());
  EXPECT_TRUE(r.sources[0].theta_without.empty());
  EXPECT_TRUE(r.loso_by_case.empty());
  EXPECT_NEAR(r.sources[0].in_sample_pct[0], 0, 0.05);
}

TEST(LosoFit, RefusesNoCases) {
  EXPECT_THROW(fit_parameters(kEfficiency, {0.5}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace axo
