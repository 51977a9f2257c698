// One set of fitted figures per GPU type, and what they are worth on runs the
// fit did not see: `axo validate --fit`.
//
// The figures fitted are the machine profile's three efficiencies that stand for
// what a GPU type achieves rather than what a cluster is wired with:
//   gemm.max_efficiency       the best fraction of peak large GEMMs reach
//   memory_bound_efficiency   the fraction of HBM bandwidth memory-bound ops reach
//   gemm.attention_efficiency the fraction of peak a fused flash-attention kernel reaches
//                             (no effect on entries whose stack materializes attention)
// Each entry keeps its own preset (network, memory, peak); only these are
// replaced, by one value per GPU type, fitted on every expressed entry of that
// GPU type (loso_fit.h), and again without each source for its LOSO error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/error_band.h"
#include "planner/loso_fit.h"
#include "planner/validation.h"

namespace axo {

// The fitted figures, in the order of the theta vectors below.
const std::vector<FitParameter>& gpu_fit_parameters();
// `profile` with the figures `theta` put in.
MachineProfile with_fitted_figures(MachineProfile profile, const std::vector<double>& theta);

struct GpuFit {
  std::string gpu;
  std::vector<double> theta_preset;  // the presets' figures (of the first entry's machine)
  LosoResult loso;
  std::optional<ErrorBand> band;  // from every source's LOSO residuals of iteration times
};

// Why a fit has no band, to follow "its runs": "come from one source
// (leave-one-source-out needs two)" or "leave fewer than two iteration times
// with a leave-one-source-out error".
std::string no_band_reason(const GpuFit& fit);

// One fit per GPU type over the expressed entries, in order of first appearance.
std::vector<GpuFit> fit_by_gpu(const std::vector<ValidationEntry>& entries);

// Per GPU type: the fitted figures, then per source the in-sample and LOSO
// mean |error|, worst and bias, then the band.
std::string fit_table(const std::vector<GpuFit>& fits);

}  // namespace axo
