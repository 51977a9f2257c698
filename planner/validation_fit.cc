// Per-GPU-type fit with leave-one-source-out errors (see validation_fit.h).
#include "planner/validation_fit.h"

#include <cstdio>

#include "planner/validation_summary.h"

namespace axo {

const std::vector<FitParameter>& gpu_fit_parameters() {
  static const std::vector<FitParameter> parameters = {{"gemm.max_efficiency", 0.3, 1.0},
                                                       {"memory_bound_efficiency", 0.2, 1.0},
                                                       {"gemm.attention_efficiency", 0.1, 1.0}};
  return parameters;
}

MachineProfile with_fitted_figures(MachineProfile profile, const std::vector<double>& theta) {
  profile.gemm_max_efficiency = theta.at(0);
  profile.memory_bound_efficiency = theta.at(1);
  profile.attention_efficiency = theta.at(2);
  return profile;
}

namespace {

// The band's residuals: the leave-one-source-out errors of the iteration times
// among `used` (the fit's entries, in its cases' order), not of per-layer
// times, which no plan predicts.
std::vector<double> iteration_residuals(const LosoResult& loso, const std::vector<const ValidationEntry*>& used) {
  std::vector<double> residuals;
  for (size_t k = 0; k < loso.loso_by_case.size(); ++k) {
    if (used[k]->quantity == Quantity::iteration_s) residuals.push_back(loso.loso_by_case[k]);
  }
  return residuals;
}

std::string stats_cells(const std::vector<double>& errors) {
  if (errors.empty()) return "      (no other source)       ";
  const ErrorStats s = error_stats(errors);
  char cells[80];
  std::snprintf(cells, sizeof cells, "%7.1f%% %+8.1f%% %+7.1f%%", s.mean_abs_pct, s.worst_pct, s.bias_pct);
  return cells;
}

std::string theta_text(const std::vector<double>& theta) {
  if (theta.empty()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.3f, %.3f, %.3f", theta[0], theta[1], theta[2]);
  return text;
}

}  // namespace

std::string no_band_reason(const GpuFit& fit) {
  return fit.loso.sources.size() < 2 ? "come from one source (leave-one-source-out needs two)"
                                     : "leave fewer than " + std::to_string(minimum_band_runs(kBandCoverage)) +
                                           " iteration times with a leave-one-source-out error (a 90% band needs "
                                           "one beyond each end)";
}

std::vector<GpuFit> fit_by_gpu(const std::vector<ValidationEntry>& entries) {
  std::vector<GpuFit> fits;
  for (const ValidationEntry& first : entries) {
    if (!first.expressed()) continue;
    bool seen = false;
    for (const GpuFit& f : fits) seen = seen || f.gpu == first.gpu;
    if (seen) continue;
    GpuFit fit;
    fit.gpu = first.gpu;
    fit.theta_preset = {first.profile.gemm_max_efficiency, first.profile.memory_bound_efficiency,
                        first.profile.attention_efficiency};
    std::vector<FitCase> cases;
    std::vector<const ValidationEntry*> used;
    for (const ValidationEntry& e : entries) {
      if (!e.expressed() || e.gpu != fit.gpu) continue;
      used.push_back(&e);
      cases.push_back({e.group, e.measured, [&e](const std::vector<double>& theta) {
                         return predict(e, with_fitted_figures(e.profile, theta));
                       }});
    }
    fit.loso = leave_one_source_out(gpu_fit_parameters(), fit.theta_preset, cases);
    fit.band = error_band(iteration_residuals(fit.loso, used), fit.gpu);
    fits.push_back(fit);
  }
  return fits;
}

std::string fit_table(const std::vector<GpuFit>& fits) {
  std::string out;
  char line[300];
  for (const GpuFit& f : fits) {
    out += f.gpu + ": gemm.max_efficiency, memory_bound_efficiency, gemm.attention_efficiency = " + theta_text(f.loso.theta_all) +
           " fitted on all its runs (presets: " + theta_text(f.theta_preset) + ")\n";
    std::snprintf(line, sizeof line, "  %-24s %5s  %-28s  %-28s  %s\n", "source", "count",
                  "in-sample mean|e| worst bias", "LOSO mean|e| worst bias", "fitted without it");
    out += line;
    for (const SourceResult& s : f.loso.sources) {
      std::snprintf(line, sizeof line, "  %-24s %5zu  %-28s  %-28s  %s\n", s.source.c_str(), s.in_sample_pct.size(),
                    stats_cells(s.in_sample_pct).c_str(), stats_cells(s.loso_pct).c_str(),
                    theta_text(s.theta_without).c_str());
      out += line;
    }
    std::vector<double> in_sample, loso;
    for (const SourceResult& s : f.loso.sources) {
      in_sample.insert(in_sample.end(), s.in_sample_pct.begin(), s.in_sample_pct.end());
      loso.insert(loso.end(), s.loso_pct.begin(), s.loso_pct.end());
    }
    std::snprintf(line, sizeof line, "  %-24s %5zu  %-28s  %s\n", "all sources", in_sample.size(),
                  stats_cells(in_sample).c_str(), stats_cells(loso).c_str());
    out += line;
    out += "  band: " + (f.band ? band_text(*f.band) : "none: its runs " + no_band_reason(f)) + "\n\n";
  }
  return out;
}

}  // namespace axo
