// The per-GPU-type fit on real entries: it sets only the fitted figures, it
// does no worse in sample than the presets, and a single source has no LOSO
// error and no band.
#include "planner/validation_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/presets.h"

namespace axo {
namespace {

double mean_squared_log_error(const std::vector<double>& errors_pct) {
  double sum = 0;
  for (double e : errors_pct) sum += std::pow(std::log(1 + e / 100), 2);
  return sum / double(errors_pct.size());
}

TEST(ValidationFit, WithFittedFiguresSetsOnlyTheThreeEfficiencies) {
  const MachineProfile selene = load_machine("selene");
  const MachineProfile fitted = with_fitted_figures(selene, {0.7, 0.6, 0.4});
  EXPECT_DOUBLE_EQ(fitted.gemm_max_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(fitted.memory_bound_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(fitted.attention_efficiency, 0.4);
  EXPECT_EQ(fitted.attention, selene.attention);
  EXPECT_DOUBLE_EQ(fitted.nic_bandwidth_GBps, selene.nic_bandwidth_GBps);
  EXPECT_DOUBLE_EQ(fitted.gemm_half_efficiency_dim, selene.gemm_half_efficiency_dim);
  EXPECT_EQ(gpu_fit_parameters().size(), 3u);
}

TEST(ValidationFit, OneSourceFitsNoWorseThanThePresetAndHasNoBand) {
  const ValidationSet set = load_validation_set(config_dir() + "/validation/korthikanti2022_table5.yaml");
  const auto entries = validate_set(set, load_machine(set.machine), "korthikanti2022_table5");
  const auto fits = fit_by_gpu(entries);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].gpu, "A100-80");
  ASSERT_EQ(fits[0].loso.sources.size(), 1u);
  const SourceResult& s = fits[0].loso.sources[0];
  EXPECT_EQ(s.in_sample_pct.size(), 8u);
  EXPECT_TRUE(s.loso_pct.empty());
  EXPECT_FALSE(fits[0].band);
  std::vector<double> preset_errors;
  for (const ValidationEntry& e : entries) preset_errors.push_back(e.error_pct);
  EXPECT_LE(mean_squared_log_error(s.in_sample_pct), mean_squared_log_error(preset_errors) + 1e-12);
  EXPECT_NE(fit_table(fits).find("band: none"), std::string::npos);
}

}  // namespace
}  // namespace axo
