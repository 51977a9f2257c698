// The error band `axo plan` puts on every prediction: the leave-one-source-out
// band (error_band.h) of the machine's GPU type (MachineProfile::gpu_type),
// from the published entries of that GPU type in configs/validation (the
// Korthikanti sets and the public corpus, validation.h), fitted as `axo
// validate --fit` fits a GPU type, on all of them (validation_fit.h): the band
// it prints is this one. Only iteration times' residuals make the band, as it
// is put on iteration times (a set's per-layer times are not runs).
//
// Where there is none the reason is given instead: the profile names no GPU
// type (e.g. a calibrated CPU profile), no published run used that GPU type,
// none of its runs can be costed yet, or its runs come from one source
// (leave-one-source-out needs two).
#pragma once

#include <optional>
#include <string>

#include "planner/error_band.h"

namespace axo {

struct PredictionBand {
  std::optional<ErrorBand> band;
  std::string no_band;  // without a band: "no band: no published runs on V100-16"

  // "-6% / +9%: 90% of 84 published H100-80 runs", or no_band.
  std::string text() const;
};

// The band of `gpu_type` ("": the profile names none) from the YAML files in
// `validation_dir` (configs/validation).
PredictionBand prediction_band(const std::string& gpu_type, const std::string& validation_dir);

}  // namespace axo
