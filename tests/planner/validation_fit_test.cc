// The per-GPU-type fit on real entries: it sets only the fitted figures, it
// does no worse in sample than the presets, and a single source has no LOSO
// error and no band; each GPU type's leave-one-source-out error stays under
// where the physics brought it.
#include "planner/validation_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "model/presets.h"
#include "planner/validation_summary.h"

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

// Issue 16's honest number, held: each source of a GPU type predicted with the figures fitted on
// the others, mean |error| over all of that type's runs (configs/validation/README.md: A100-80
// 6.2% over 97 runs, H100-80 4.4% over 155, with GEMMs quantized over the SMs' waves, the
// data-parallel buckets' latency priced and fp8's deeper k; the target is 10%). A ceiling,
// never raised above where the corpus and the sets, as their stacks ran, put it (A100-80 8.5 before
// the waves, 9.0 before Narayanan joined; H100-80 6.5 before both, 5.5 before fp8's k). A100-80's
// was 6.0 over 95 runs until torchtitan's two per-layer checkpointing runs were expressed (partial
// recompute): with nothing else changed, its leave-one-source-out error over 97 runs is 6.2%, as
// those runs move FlashAttention-2's A100 rate fitted without mpt (0.332 to 0.355 of peak).
TEST(ValidationFit, LeaveOneSourceOutStaysUnderItsCeilings) {
  const std::map<std::string, double> ceilings = {{"A100-80", 6.5}, {"H100-80", 5.0}};
  auto entries = validate_corpus(load_corpus(config_dir() + "/validation/public-runs.yaml"));
  for (const char* table : {"korthikanti2022_table4", "korthikanti2022_table5", "narayanan2021_table1"}) {  // as `axo validate --fit`
    const ValidationSet set = load_validation_set(config_dir() + "/validation/" + table + ".yaml");
    const auto points = validate_set(set, load_machine(set.machine), table);
    entries.insert(entries.end(), points.begin(), points.end());
  }
  int checked = 0;
  for (const GpuFit& fit : fit_by_gpu(entries)) {
    const auto ceiling = ceilings.find(fit.gpu);
    if (ceiling == ceilings.end()) continue;
    std::vector<double> loso;
    for (const SourceResult& s : fit.loso.sources) loso.insert(loso.end(), s.loso_pct.begin(), s.loso_pct.end());
    EXPECT_GT(loso.size(), 60u) << fit.gpu;
    EXPECT_LT(error_stats(loso).mean_abs_pct, ceiling->second) << fit.gpu;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

}  // namespace
}  // namespace axo
