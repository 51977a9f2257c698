// Fitting a few figures to published runs, and the honest error of doing so:
// leave-one-source-out (LOSO).
//
// A case is one published measurement with a prediction that depends on a
// small vector of parameters (e.g. a GPU type's GEMM and memory-bound
// efficiencies). The fit minimizes the mean squared log ratio
//     L(θ) = mean over cases of ln(predicted(θ) / measured)²
// (symmetric in over- and under-prediction) by compass search inside the
// parameters' bounds. LOSO refits without each source in turn and reports
// that source's errors under the figures fitted on the others: what a user
// whose cluster and stack are like none of the sources can expect.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace axo {

struct FitParameter {
  std::string name;
  double lower = 0, upper = 1;
};

struct FitCase {
  std::string source;  // the group LOSO leaves out
  double measured = 0;
  std::function<double(const std::vector<double>&)> predict;
};

// The θ that minimizes L over the cases, starting from `start` (clamped to the
// bounds). Throws std::invalid_argument when there are no cases or the sizes differ.
std::vector<double> fit_parameters(const std::vector<FitParameter>& parameters, const std::vector<double>& start,
                                   const std::vector<const FitCase*>& cases);

// 100·(predicted − measured)/measured of every case under θ.
std::vector<double> errors_pct(const std::vector<const FitCase*>& cases, const std::vector<double>& theta);

struct SourceResult {
  std::string source;
  std::vector<double> in_sample_pct;  // errors under the figures fitted on every source
  std::vector<double> loso_pct;       // errors under the figures fitted without this source
  std::vector<double> theta_without;  // empty when it is the only source
};

struct LosoResult {
  std::vector<double> theta_all;
  std::vector<SourceResult> sources;  // in order of first appearance
  // Each case's error under the figures fitted without its source, in the
  // order of the cases given; empty where there is one source only.
  std::vector<double> loso_by_case;
};

LosoResult leave_one_source_out(const std::vector<FitParameter>& parameters, const std::vector<double>& start,
                                const std::vector<FitCase>& cases);

}  // namespace axo
