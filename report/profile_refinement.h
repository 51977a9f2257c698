// Refining a machine profile against measured runs: the few factors the cost
// model scales by are fitted so that each plan, costed again on the refined
// profile, predicts its run's components as closely as possible.
//
// The factors multiply rates of the profile (1 leaves it as it is):
//   gemm     GEMM rate: gemm.max_efficiency, or, when the profile has a
//            measured GEMM table, every sample's tflops (the table then sets
//            the rate and max_efficiency cancels out of gemm_model.h)
//   memory   memory_bound_efficiency: layernorm, softmax, GELU, the device optimizer
//   network  the speed of every collective: their times are divided by it
//            (the profile's collective_slowdown)
//   host     the host link both ways and the CPU optimizer rate (CPU offload)
//   overlap  overlap_efficiency: how much of an overlapped collective hides
//            under compute (a profile measured at 0 stays there)
// Efficiencies stay within (0, 1] (the profile's schema); each factor
// within [1/20, 20], but the overlap's, whose bounds are its efficiency's
// own, [1e-3, 1].
//
// The fit runs three times, each from where the last stopped. First it
// minimises the mean of squared relative errors over every run's components,
// r = (predicted − measured) / max(measured, 1% of the measured iteration):
// relative, so a short component counts as much as a long one (that is what
// tells the factors apart), floored at 1% of the iteration so that a
// component the run barely saw cannot dominate. Then the same errors as
// shares of the iteration, r = (predicted − measured) / measured iteration:
// the components the step is made of should be right first. Last, the
// iteration times themselves, r = ln(predicted / measured) (a ratio as far
// off either way: 1.4x too fast as 1.4x too slow): the planner ranks by them, and where ranks share cores a run books as waiting
// what the model calls compute, so no factors fit every component. Each is a
// compass search in the logarithms of the
// factors (Kolda, Lewis & Torczon, SIAM Review 2003): try
// each factor ×/÷ a step, keep any improvement, halve the step when none,
// until the step is below 1e−5, and after a sweep that moved, its whole move
// again while that helps (Hooke & Jeeves' pattern move: factors that trade
// against each other, the network's speed and the overlap, lie along a
// valley no single factor's step descends); the cost model's max() terms (overlap,
// rooflines) make gradients unreliable, and five parameters are few. A
// factor that changes no prediction of these runs stays at 1. The second and
// third fits add 1e−4 per squared log-factor moved from where the fit before
// stopped: a few runs' shares or iteration times leave directions free (GEMM
// against memory-bound rates in one compute component, the host link of an
// offload run whose optimizer is a small share), and without that pull the
// search wandered along them to a bound (the host link 20x faster where the
// runs' own optimizer was slower than predicted), and refining the refined
// profile again on the same runs moved it another 20x. The pull is on the fit's mean square: 1e−4 is a
// 1% error on every residual, so a factor a single run of many informs (the
// host link, from one offload run) stays nearer where it was than one every
// run informs.
//
// Where the three fits end predicting the runs' iteration times worse, as a
// whole (the mean of r²), than the input profile did, the iteration times
// alone are fitted from the input instead (`iterations_only`). Fitted to
// the measured times' relative errors, three CPU runs' iteration errors had
// gone from +10%, +21%, −40% to +40%, +48%, −24% (better by that measure).
// A single run can still move away, and runs whose components mislead (ranks
// that disturbed one another on two cores) still take a factor to its bound
// and refits further.
//
// A run whose ranks shared cores (run_file.h, ranks_shared_cores) booked as
// communication the time a rank waited for ranks that were not running: it
// gives every fit its iteration time only, and the communication factors
// (network, overlap) are free only where a run whose ranks had cores of their
// own depends on them (all runs, that one included, then fit them together).
// Fitted on such runs' components, the network factor had read their waiting
// as collectives 13 times slower than calibrated, and the plans the fit had
// not seen, with more communication, came out 18-26% slow.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "model/machine_profile.h"
#include "model/plan_file.h"
#include "report/run_file.h"

namespace axo {

inline constexpr std::array<const char*, 5> kRefinementFactorNames = {"gemm", "memory", "network", "host",
                                                                       "overlap"};
constexpr size_t kRefinementFactors = kRefinementFactorNames.size();
using RefinementFactors = std::array<double, kRefinementFactors>;

struct RefinementCase {
  std::string label;  // e.g. the run file, for messages
  Plan plan;          // its model and configuration are costed again
  MeasuredRun run;
};

struct RefinementResult {
  RefinementFactors factors{1, 1, 1, 1, 1};       // in kRefinementFactorNames order
  std::array<bool, kRefinementFactors> constrained{};  // false: no run's prediction depends on it
  int runs_sharing_cores = 0;  // runs that gave their iteration time only (above)
  // True where the fit stopped at a bound (1/20, 20, or an efficiency of 1):
  // the runs ask for more than the profile's schema allows (a profile of
  // another machine, or work the model charges at a rate the run beat).
  std::array<bool, kRefinementFactors> at_limit{};
  MachineProfile profile;                         // the input with the factors applied
  double rms_error_before = 0, rms_error_after = 0;  // root mean square of r
  // Per case: (measured − predicted) / predicted iteration time (as axo report), before and after.
  std::vector<double> iteration_error_before, iteration_error_after;
  int evaluations = 0;
  // The three fits predicted the runs' iteration times worse than the input profile (components
  // that mislead: timings of ranks that disturbed each other, say): the result is the iteration
  // times' fit alone, from the input, which never predicts them worse.
  bool iterations_only = false;
};

// Whether factor `i` is one of communication (network, overlap), which runs
// whose ranks shared cores cannot tell apart from compute (above).
bool communication_factor(size_t i);

// `profile` with `factors` applied (see above); efficiencies are clamped to 1.
MachineProfile apply_refinement_factors(const MachineProfile& profile,
                                        const RefinementFactors& factors);

// Root mean square of the relative component errors r (the first fit's) of `cases` on `profile`.
// Throws InputError when a plan's configuration does not fit its model.
double refinement_error(const MachineProfile& profile, const std::vector<RefinementCase>& cases);

// Throws InputError on no cases or a plan that cannot be costed.
RefinementResult refine_profile(const MachineProfile& profile, const std::vector<RefinementCase>& cases);

}  // namespace axo
