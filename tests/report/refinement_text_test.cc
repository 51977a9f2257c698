// The refinement for people: its factors, its errors, and a word where the fit made the
// components worse than the profile it started from.
#include "report/refinement_text.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

RefinementResult result_with_errors(double before, double after) {
  RefinementResult result;
  result.profile = load_machine("selene");
  result.rms_error_before = before, result.rms_error_after = after;
  result.iteration_error_before = {0.20}, result.iteration_error_after = {0.01};
  return result;
}

TEST(RefinementText, ListsTheFactorsAndTheErrors) {
  const std::string text = refinement_text(result_with_errors(0.35, 0.001), load_machine("selene"), {"run1.json"});
  EXPECT_NE(text.find("factor      value  profile\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gemm       1.0000  (no run depends on it: unchanged)"), std::string::npos) << text;
  EXPECT_NE(text.find("RMS relative component error: 35.00% before, 0.10% after"), std::string::npos) << text;
  EXPECT_NE(text.find("run1.json: iteration time error +20.00% before, +1.00% after"), std::string::npos) << text;
  EXPECT_EQ(text.find("The components' error grew"), std::string::npos) << text;
  EXPECT_EQ(text.find("Fitted to the iteration times alone"), std::string::npos) << text;
}

// The fit of the components predicted the iterations worse than the input: the result is the
// iteration times' fit alone, and the text says so.
TEST(RefinementText, SaysWhenOnlyTheIterationTimesWereFitted) {
  RefinementResult result = result_with_errors(0.35, 0.30);
  result.iterations_only = true;
  const std::string text = refinement_text(result, load_machine("selene"), {"run1.json"});
  EXPECT_NE(text.find("Fitted to the iteration times alone: the fit of the components predicted these runs' "
                      "iteration\ntimes worse than the profile did"),
            std::string::npos)
      << text;
}

// Two runs of alike plans met by trading compute for communication: the iteration times agree and
// the components are further off than before. The text says so, and what would pin the factors.
TEST(RefinementText, SaysWhenTheComponentsGotWorse) {
  const std::string text = refinement_text(result_with_errors(0.61, 2.41), load_machine("selene"), {"run1.json"});
  EXPECT_NE(text.find("The components' error grew: the fit met the iteration times by trading one component"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace axo
