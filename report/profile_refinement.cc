// Fitting a machine profile's efficiency factors to runs (see profile_refinement.h).
#include "report/profile_refinement.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "model/cost_model.h"
#include "model/error.h"

namespace axo {

namespace {

constexpr double kFactorLimit = 20;   // each factor within [1/20, 20]
constexpr double kMinEfficiency = 1e-3;  // the profile schema's lower bound
// The later fits' pull towards where the one before stopped, per squared log-factor (see the header).
constexpr double kAnchorWeight = 1e-4;

Breakdown predict(const MachineProfile& profile, const RefinementCase& c) {
  const CostModel model(c.plan.model, profile);
  if (const std::string why = model.check(c.plan.config); !why.empty()) {
    throw InputError(c.label + ": the plan's configuration cannot be costed: " + why);
  }
  return model.evaluate(c.plan.config);
}

// What a fit minimises (see the header).
enum class Residuals { components, shares, total };

// Residuals of one case: each component's error relative to itself (floored
// at 1% of the iteration) or as a share of the measured iteration, or the
// iteration's own, ln(predicted / measured). A run whose
// ranks shared cores gives its iteration only: it booked as communication
// the time a rank waited for ranks that were not running (run_file.h).
void append_residuals(const Breakdown& predicted, const MeasuredRun& run, Residuals kind, std::vector<double>& out) {
  const double iteration = std::max(run.iteration_s, 1e-12);
  if (kind == Residuals::total || ranks_shared_cores(run)) {
    // ln(predicted / measured): a ratio as far off either way (1.4x too fast as 1.4x too slow);
    // relative to the measured time, a run predicted 1.4x too fast counted -29% and 1.4x too slow +40%.
    out.push_back(std::log(std::max(predicted.iter_time, 1e-12) / iteration));
    return;
  }
  const auto values = components(predicted);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] == 0 && run.components[i] == 0) continue;
    const double scale = kind == Residuals::components ? std::max(run.components[i], 0.01 * iteration) : iteration;
    out.push_back((values[i] - run.components[i]) / scale);
  }
}

double mean_square(const std::vector<double>& residuals) {
  double sum = 0;
  for (double r : residuals) sum += r * r;
  return residuals.empty() ? 0 : sum / double(residuals.size());
}

std::vector<Breakdown> predict_all(const MachineProfile& profile, const std::vector<RefinementCase>& cases) {
  std::vector<Breakdown> predictions;
  for (const RefinementCase& c : cases) predictions.push_back(predict(profile, c));
  return predictions;
}

double objective(const std::vector<Breakdown>& predictions, const std::vector<RefinementCase>& cases,
                 Residuals kind = Residuals::components) {
  std::vector<double> residuals;
  for (size_t k = 0; k < cases.size(); ++k) append_residuals(predictions[k], cases[k].run, kind, residuals);
  return mean_square(residuals);
}

std::vector<double> iteration_errors(const std::vector<Breakdown>& predictions,
                                     const std::vector<RefinementCase>& cases) {
  std::vector<double> errors;
  for (size_t k = 0; k < cases.size(); ++k) {
    // As axo report states it (comparison.h): measured − predicted, relative to the prediction.
    const double predicted = predictions[k].iter_time;
    errors.push_back(predicted > 0 ? (cases[k].run.iteration_s - predicted) / predicted : 0.0);
  }
  return errors;
}

// Whether any prediction moves when factor `i` is halved or doubled, of the
// runs that can tell it (all of them, but for a communication factor those
// whose ranks had cores of their own).
bool affects_predictions(const MachineProfile& profile, const std::vector<RefinementCase>& cases,
                         const std::vector<Breakdown>& base, size_t i) {
  for (double f : {0.5, 2.0}) {
    RefinementFactors factors{1, 1, 1, 1, 1};
    factors[i] = f;
    const std::vector<Breakdown> moved = predict_all(apply_refinement_factors(profile, factors), cases);
    for (size_t k = 0; k < cases.size(); ++k) {
      if (communication_factor(i) && ranks_shared_cores(cases[k].run)) continue;
      const auto a = components(base[k]), b = components(moved[k]);
      for (size_t c = 0; c < a.size(); ++c) {
        if (std::abs(a[c] - b[c]) > 1e-12 * std::max(std::abs(a[c]), 1e-30)) return true;
      }
    }
  }
  return false;
}

// A sample scaled past its precision's peak raises the peak to it: a calibrated profile's peak is
// its best sample, and a profile refuses a sample above its peak. A precision without a rate
// (peak 0) stays without one. Flash attention runs at peak · attention_efficiency: the bf16 peak's
// rise is taken back from the efficiency, so the GEMM factor moves the GEMMs alone.
void raise_peaks_to_samples(MachineProfile& p) {
  const double bf16_before = p.peak_tflops_bf16;
  for (const GemmSample& s : p.gemm_table) {
    double& peak = s.precision == Precision::fp32   ? p.peak_tflops_fp32
                   : s.precision == Precision::fp16 ? p.peak_tflops_fp16
                   : s.precision == Precision::bf16 ? p.peak_tflops_bf16
                                                    : p.peak_tflops_fp8;
    if (peak > 0) peak = std::max(peak, s.tflops);
  }
  if (bf16_before > 0) p.attention_efficiency *= bf16_before / p.peak_tflops_bf16;
}

// A compass search of `cost` in log-factors from `theta` over the `free` factors within [low,
// high] (see the header): each factor ×/÷ a step, any improvement kept, the step halved when none,
// until it is below 1e−5 or after 20000 evaluations. After a sweep that moved, a pattern move
// (Hooke and Jeeves 1961): the sweep's whole move again, twice as long each time it helps. Two
// factors that trade against each other (the network's speed and the overlap) lie along a valley
// no single factor's step descends, where the sweep had stopped short of the bound the runs ask for.
RefinementFactors compass_search(RefinementFactors theta, const std::vector<size_t>& free, const RefinementFactors& low,
                                 const RefinementFactors& high,
                                 const std::function<double(const RefinementFactors&)>& cost) {
  double best = cost(theta);
  int evaluations = 1;
  for (double step = std::log(2.0); step > 1e-5 && evaluations < 20000;) {
    bool improved = false;
    const RefinementFactors sweep_start = theta;
    for (size_t i : free) {
      for (double direction : {1.0, -1.0}) {
        RefinementFactors candidate = theta;
        candidate[i] = std::clamp(theta[i] + direction * step, low[i], high[i]);
        if (candidate[i] == theta[i]) continue;
        const double value = cost(candidate);
        ++evaluations;
        if (value < best) {
          best = value, theta = candidate, improved = true;
          break;
        }
      }
    }
    if (!improved) {
      step /= 2;
      continue;
    }
    RefinementFactors move{};
    for (size_t i : free) move[i] = theta[i] - sweep_start[i];
    for (double stretch = 1; evaluations < 20000; stretch *= 2) {  // the sweep's move again, twice as long each time
      RefinementFactors further = theta;
      for (size_t i : free) further[i] = std::clamp(theta[i] + stretch * move[i], low[i], high[i]);
      const double value = cost(further);
      ++evaluations;
      if (!(value < best)) break;
      best = value, theta = further;
    }
  }
  return theta;
}

}  // namespace

bool communication_factor(size_t i) {
  const std::string name = kRefinementFactorNames.at(i);
  return name == "network" || name == "overlap";
}

MachineProfile apply_refinement_factors(const MachineProfile& profile,
                                        const RefinementFactors& factors) {
  MachineProfile p = profile;
  if (p.gemm_table.empty()) {
    p.gemm_max_efficiency = std::min(1.0, p.gemm_max_efficiency * factors[0]);
  } else {
    for (GemmSample& sample : p.gemm_table) sample.tflops *= factors[0];
    raise_peaks_to_samples(p);
  }
  p.memory_bound_efficiency = std::min(1.0, p.memory_bound_efficiency * factors[1]);
  p.collective_slowdown /= factors[2];
  p.host_to_device_GBps *= factors[3];
  p.device_to_host_GBps *= factors[3];
  p.cpu_optimizer_params_per_s *= factors[3];
  p.overlap_efficiency = std::min(1.0, p.overlap_efficiency * factors[4]);
  return p;
}

double refinement_error(const MachineProfile& profile, const std::vector<RefinementCase>& cases) {
  return std::sqrt(objective(predict_all(profile, cases), cases));
}

RefinementResult refine_profile(const MachineProfile& profile, const std::vector<RefinementCase>& cases) {
  if (cases.empty()) throw InputError("refinement needs at least one run with its plan");
  RefinementResult result;
  const std::vector<Breakdown> before = predict_all(profile, cases);
  result.rms_error_before = std::sqrt(objective(before, cases));
  result.iteration_error_before = iteration_errors(before, cases);

  // Search in log-factors, within the limits and the efficiencies' bounds.
  RefinementFactors low, high, theta{};
  for (size_t i = 0; i < kRefinementFactors; ++i) low[i] = -std::log(kFactorLimit), high[i] = std::log(kFactorLimit);
  if (profile.gemm_table.empty()) {
    high[0] = std::min(high[0], std::log(1.0 / profile.gemm_max_efficiency));
    low[0] = std::max(low[0], std::log(kMinEfficiency / profile.gemm_max_efficiency));
  }
  // The overlap's bounds are its own, [kMinEfficiency, 1], not 20x around it: runs that hide
  // nothing ask for 0, and a relative bound moved it 20x further on every refit.
  if (profile.overlap_efficiency > 0) {
    low[4] = std::min(0.0, std::log(kMinEfficiency / profile.overlap_efficiency));
    high[4] = std::log(1.0 / profile.overlap_efficiency);
  }
  high[1] = std::min(high[1], std::log(1.0 / profile.memory_bound_efficiency));
  low[1] = std::max(low[1], std::log(kMinEfficiency / profile.memory_bound_efficiency));
  for (const RefinementCase& c : cases) result.runs_sharing_cores += ranks_shared_cores(c.run);
  std::vector<size_t> free;
  for (size_t i = 0; i < kRefinementFactors; ++i) {
    result.constrained[i] = affects_predictions(profile, cases, before, i);
    if (result.constrained[i]) free.push_back(i);
  }
  RefinementFactors anchor{};  // where the fit before this one stopped
  auto predicted_with = [&](const RefinementFactors& log_factors) {
    RefinementFactors factors;
    for (size_t i = 0; i < kRefinementFactors; ++i) factors[i] = std::exp(log_factors[i]);
    ++result.evaluations;
    return predict_all(apply_refinement_factors(profile, factors), cases);
  };
  auto cost = [&](const RefinementFactors& log_factors, Residuals kind) {
    double moved = 0;
    for (size_t i = 0; i < kRefinementFactors; ++i) moved += (log_factors[i] - anchor[i]) * (log_factors[i] - anchor[i]);
    const double weight = kind == Residuals::components ? 0.0 : kAnchorWeight;
    return objective(predicted_with(log_factors), cases, kind) + weight * moved;
  };
  auto fit = [&](const RefinementFactors& from, Residuals kind) {
    anchor = from;
    return compass_search(from, free, low, high, [&](const RefinementFactors& f) { return cost(f, kind); });
  };
  // Components first (they tell the factors apart), then their shares of the
  // iteration, then the iteration itself, each from where the last stopped.
  for (Residuals kind : {Residuals::components, Residuals::shares, Residuals::total}) theta = fit(theta, kind);
  // Never a profile that predicts the runs' iteration times worse, as a whole, than the input did.
  if (objective(predicted_with(theta), cases, Residuals::total) > objective(before, cases, Residuals::total)) {
    theta = fit(RefinementFactors{}, Residuals::total);
    result.iterations_only = true;
  }
  for (size_t i = 0; i < kRefinementFactors; ++i) {
    result.factors[i] = std::exp(theta[i]);
    result.at_limit[i] = result.constrained[i] && (theta[i] == low[i] || theta[i] == high[i]);
  }
  result.profile = apply_refinement_factors(profile, result.factors);
  const std::vector<Breakdown> after = predict_all(result.profile, cases);
  result.rms_error_after = std::sqrt(objective(after, cases));
  result.iteration_error_after = iteration_errors(after, cases);
  return result;
}

}  // namespace axo
