// Predictions against Korthikanti et al. 2022 Table 5 with one Selene profile.
// The bar: under 3% mean and 6% worst error (Calculon: 3.65% / 8.87%).
#include "planner/validation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/presets.h"

namespace axo {
namespace {

TEST(Validation, Korthikanti2022Table5) {
  const ValidationSet set = load_validation_set(config_dir() + "/validation/korthikanti2022_table5.yaml");
  ASSERT_EQ(set.points.size(), 8u);
  const auto results = run_validation(set, load_machine(set.machine));
  ASSERT_EQ(results.size(), 8u);
  double sum = 0, worst = 0;
  for (const ValidationResult& r : results) {
    EXPECT_EQ(r.quantity, "iteration (s)");
    sum += std::fabs(r.error_pct);
    worst = std::max(worst, std::fabs(r.error_pct));
    EXPECT_LT(std::fabs(r.error_pct), 6.0) << r.point->name;
  }
  EXPECT_LT(sum / double(results.size()), 3.0);
  EXPECT_LT(worst, 6.0);
}

// Per-layer times of the 22B model (Table 4), a finer check of the same
// profile: every forward and backward within 10%.
TEST(Validation, Korthikanti2022Table4PerLayer) {
  const ValidationSet set = load_validation_set(config_dir() + "/validation/korthikanti2022_table4.yaml");
  const auto results = run_validation(set, load_machine(set.machine));
  ASSERT_EQ(results.size(), 10u);
  for (const ValidationResult& r : results) {
    EXPECT_LT(std::fabs(r.error_pct), 10.0) << r.point->name << " " << r.quantity;
  }
}

}  // namespace
}  // namespace axo
