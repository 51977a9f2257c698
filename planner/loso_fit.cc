// Compass-search fit and leave-one-source-out (see loso_fit.h).
#include "planner/loso_fit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace axo {

namespace {

double mean_squared_log_ratio(const std::vector<const FitCase*>& cases, const std::vector<double>& theta) {
  double sum = 0;
  for (const FitCase* c : cases) {
    const double predicted = c->predict(theta);
    const double r = std::log(std::max(predicted, 1e-300) / c->measured);
    sum += r * r;
  }
  return sum / double(cases.size());
}

}  // namespace

std::vector<double> fit_parameters(const std::vector<FitParameter>& parameters, const std::vector<double>& start,
                                   const std::vector<const FitCase*>& cases) {
  if (cases.empty()) throw std::invalid_argument("fit_parameters: no cases to fit");
  if (start.size() != parameters.size()) throw std::invalid_argument("fit_parameters: start has the wrong size");
  const size_t n = parameters.size();
  std::vector<double> theta(n), step(n);
  for (size_t i = 0; i < n; ++i) {
    theta[i] = std::clamp(start[i], parameters[i].lower, parameters[i].upper);
    step[i] = (parameters[i].upper - parameters[i].lower) / 4;
  }
  double best = mean_squared_log_ratio(cases, theta);
  // Compass search: try ± step on each axis, keep any improvement, halve the
  // steps when none helps; stop when every step is below 1e-5 of its range.
  for (int round = 0; round < 400; ++round) {
    bool improved = false;
    for (size_t i = 0; i < n; ++i) {
      for (double sign : {1.0, -1.0}) {
        std::vector<double> trial = theta;
        trial[i] = std::clamp(theta[i] + sign * step[i], parameters[i].lower, parameters[i].upper);
        if (trial[i] == theta[i]) continue;
        const double value = mean_squared_log_ratio(cases, trial);
        if (value < best) best = value, theta = trial, improved = true;
      }
    }
    if (improved) continue;
    bool converged = true;
    for (size_t i = 0; i < n; ++i) {
      step[i] /= 2;
      converged = converged && step[i] < 1e-5 * (parameters[i].upper - parameters[i].lower);
    }
    if (converged) break;
  }
  return theta;
}

std::vector<double> errors_pct(const std::vector<const FitCase*>& cases, const std::vector<double>& theta) {
  std::vector<double> errors;
  for (const FitCase* c : cases) errors.push_back(100.0 * (c->predict(theta) - c->measured) / c->measured);
  return errors;
}

LosoResult leave_one_source_out(const std::vector<FitParameter>& parameters, const std::vector<double>& start,
                                const std::vector<FitCase>& cases) {
  std::vector<const FitCase*> all;
  std::vector<std::string> sources;
  for (const FitCase& c : cases) {
    all.push_back(&c);
    if (std::find(sources.begin(), sources.end(), c.source) == sources.end()) sources.push_back(c.source);
  }
  LosoResult result;
  result.theta_all = fit_parameters(parameters, start, all);
  for (const std::string& source : sources) {
    std::vector<const FitCase*> held_out, others;
    for (const FitCase* c : all) (c->source == source ? held_out : others).push_back(c);
    SourceResult r;
    r.source = source;
    r.in_sample_pct = errors_pct(held_out, result.theta_all);
    if (!others.empty()) {
      r.theta_without = fit_parameters(parameters, start, others);
      r.loso_pct = errors_pct(held_out, r.theta_without);
      result.loso_by_case.resize(cases.size());
      for (size_t k = 0; k < held_out.size(); ++k) result.loso_by_case[size_t(held_out[k] - cases.data())] = r.loso_pct[k];
    }
    result.sources.push_back(r);
  }
  return result;
}

}  // namespace axo
