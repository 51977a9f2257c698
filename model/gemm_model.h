// Time of one GEMM on one device, from the machine profile.
//
// The roofline: time = max(2mnk / (peak · e), bytes / HBM) + launch, where the
// compute efficiency e = max_efficiency · Π over m, n, k of d / (d + d½).
// When the profile has measured samples for the precision, the roofline is
// corrected by the measured/roofline time ratio of the nearby samples
// (inverse-distance weighting in log2(m, n, k)), so a measured shape is
// reproduced exactly and shapes between samples are interpolated.
#pragma once

#include <cstdint>

#include "model/machine_profile.h"

namespace axo {

double gemm_roofline_seconds(const MachineProfile& machine, Precision precision, double m,
                             double n, double k);
double gemm_seconds(const MachineProfile& machine, Precision precision, double m, double n,
                    double k);

}  // namespace axo
