// A refinement for people (see refinement_text.h).
#include "report/refinement_text.h"

#include <cstdio>

namespace axo {

namespace {

std::string format(const char* pattern, double a, double b) {
  char text[160];
  std::snprintf(text, sizeof text, pattern, a, b);
  return text;
}

// The profile fields factor `i` changed, before -> after.
std::string changed_fields(size_t i, const MachineProfile& p, const MachineProfile& q) {
  switch (i) {
    case 0:
      if (!p.gemm_table.empty()) {
        return format("GEMM table rates x%.4g (%.0f samples)", q.gemm_table[0].tflops / p.gemm_table[0].tflops,
                      double(p.gemm_table.size()));
      }
      return format("gemm.max_efficiency %.4g -> %.4g", p.gemm_max_efficiency, q.gemm_max_efficiency);
    case 1:
      return format("memory_bound_efficiency %.4g -> %.4g", p.memory_bound_efficiency,
                    q.memory_bound_efficiency);
    case 2:
      return format("collective_slowdown %.4g -> %.4g", p.collective_slowdown, q.collective_slowdown);
    case 4:
      return format("overlap_efficiency %.4g -> %.4g", p.overlap_efficiency, q.overlap_efficiency);
    default:
      return format("host link %.4g -> %.4g GB/s", p.host_to_device_GBps, q.host_to_device_GBps) +
             format(", CPU optimizer %.4g -> %.4g params/s", p.cpu_optimizer_params_per_s,
                    q.cpu_optimizer_params_per_s);
  }
}

}  // namespace

std::string refinement_text(const RefinementResult& result, const MachineProfile& before,
                            const std::vector<std::string>& labels) {
  std::string text = "factor      value  profile\n";
  char line[512];
  for (size_t i = 0; i < kRefinementFactorNames.size(); ++i) {
    const bool shared = result.runs_sharing_cores > 0 && communication_factor(i);
    std::string what = result.constrained[i] ? changed_fields(i, before, result.profile)
                       : shared ? "(no run with cores of its own depends on it: unchanged)"
                                : "(no run depends on it: unchanged)";
    if (result.at_limit[i]) what += " (stopped at its bound: the runs ask for more)";
    std::snprintf(line, sizeof line, "%-8s %8.4f  %s\n", kRefinementFactorNames[i], result.factors[i],
                  what.c_str());
    text += line;
  }
  std::snprintf(line, sizeof line, "RMS relative component error: %.2f%% before, %.2f%% after (%d evaluations)\n",
                100 * result.rms_error_before, 100 * result.rms_error_after, result.evaluations);
  text += line;
  if (result.rms_error_after > result.rms_error_before) {
    // The last stage fits the iteration times, which few runs of alike plans can meet with factors
    // that trade one component for another.
    text += "The components' error grew: the fit met the iteration times by trading one component for\n"
            "another, which these runs cannot tell apart; runs of plans that differ in what they spend\n"
            "their time on (compute, tensor-, data-parallel communication) pin the factors.\n";
  }
  if (result.iterations_only) {
    text += "Fitted to the iteration times alone: the fit of the components predicted these runs' iteration\n"
            "times worse than the profile did (components these runs measured apart from what the model\n"
            "prices: ranks that slowed one another, say); the factors are those that predict them best.\n";
  }
  if (result.runs_sharing_cores > 0) {
    std::snprintf(line, sizeof line,
                  "(%d run(s) whose ranks shared cores counted by their iteration time only, in this\n"
                  "error too: they book as communication the time a rank waited for ranks not running)\n",
                  result.runs_sharing_cores);
    text += line;
  }
  for (size_t k = 0; k < result.iteration_error_before.size(); ++k) {
    std::snprintf(line, sizeof line, "%s: iteration time error %+.2f%% before, %+.2f%% after\n",
                  k < labels.size() ? labels[k].c_str() : "run", 100 * result.iteration_error_before[k],
                  100 * result.iteration_error_after[k]);
    text += line;
  }
  return text;
}

}  // namespace axo
