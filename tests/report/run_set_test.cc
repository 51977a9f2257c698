// Several plans with their runs: errors, rank correlation, and whether the
// planner's pick ran within 10% of the fastest run.
#include "report/run_set.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/error.h"

namespace axo {
namespace {

TEST(RunSet, PickWithinTenPercent) {
  // The planner prefers b (1.0 s); b ran 2.1 s, the fastest (c) 2.0 s: 5% slower.
  const RunSetSummary s = summarize_run_set({{"a", 2.0, 3.0}, {"b", 1.0, 2.1}, {"c", 1.5, 2.0}});
  EXPECT_EQ(s.predicted_best, 1u);
  EXPECT_EQ(s.measured_best, 2u);
  EXPECT_NEAR(s.pick_slowdown_pct, 5.0, 1e-9);
  EXPECT_TRUE(s.pick_within_10pct);
  EXPECT_NEAR(*s.spearman, 0.5, 1e-12);  // ranks {3,1,2} vs {3,2,1}: 1 − 6·2/24
  ASSERT_EQ(s.iterations.size(), 3u);
  EXPECT_EQ(s.iterations[0].component, "a");
  EXPECT_DOUBLE_EQ(*s.iterations[0].error_pct, 50.0);
  const std::string text = run_set_text(s);
  EXPECT_NE(text.find("Spearman rank correlation (predicted vs measured order): +0.500 over 3 runs"),
            std::string::npos) << text;
  EXPECT_NE(text.find("within 10%"), std::string::npos) << text;
  EXPECT_EQ(text.find("NOT within 10%"), std::string::npos) << text;
  // Errors 50%, 110%, 33%: the worst is b's.
  EXPECT_EQ(s.worst, 1u);
  EXPECT_NEAR(s.worst_error_pct, 110.0, 1e-9);
  EXPECT_FALSE(s.worst_within_15pct);
  EXPECT_NE(text.find("Worst |error| of a predicted iteration: 110.0% (run 2): NOT every run within 15%"),
            std::string::npos) << text;
}

TEST(RunSet, EveryRunWithinFifteenPercent) {
  const RunSetSummary s = summarize_run_set({{"a", 1.0, 1.1}, {"b", 2.0, 1.8}, {"c", 4.0, 4.4}});
  EXPECT_NEAR(s.worst_error_pct, 10.0, 1e-9);
  EXPECT_TRUE(s.worst_within_15pct);
  EXPECT_NE(run_set_text(s).find(": every run within 15%"), std::string::npos);
}

TEST(RunSet, PickTooSlow) {
  const RunSetSummary s = summarize_run_set({{"a", 1.0, 3.0}, {"b", 2.0, 2.0}});
  EXPECT_FALSE(s.pick_within_10pct);
  EXPECT_NEAR(s.pick_slowdown_pct, 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(*s.spearman, -1.0);
  EXPECT_NE(run_set_text(s).find("NOT within 10%"), std::string::npos);
}

TEST(RunSet, OneRunHasNoCorrelation) {
  const RunSetSummary s = summarize_run_set({{"a", 1.0, 1.05}});
  EXPECT_FALSE(s.spearman.has_value());
  EXPECT_TRUE(s.pick_within_10pct);
  EXPECT_NE(run_set_text(s).find("Spearman rank correlation: n/a"), std::string::npos);
  EXPECT_THROW(summarize_run_set({}), InputError);
  // Two runs of plans priced alike: no order to compare, and the note says which times must differ.
  const RunSetSummary tied = summarize_run_set({{"a", 1.0, 1.05}, {"b", 1.0, 1.3}});
  EXPECT_FALSE(tied.spearman.has_value());
  EXPECT_NE(run_set_text(tied).find("n/a (needs two or more runs whose predictions differ and whose measurements differ)"),
            std::string::npos) << run_set_text(tied);
}

TEST(RunSet, Csv) {
  const RunSetSummary s = summarize_run_set({{"p1.yaml vs r1.json", 1.0, 1.5}, {"p,2", 0.0, 1.0}});
  EXPECT_EQ(run_set_csv(s),
            "plan_run,predicted_s,measured_s,error_s,error_pct\n"
            "p1.yaml vs r1.json,1,1.5,0.5,50\n"
            "\"p,2\",0,1,1,n/a\n");
}

}  // namespace
}  // namespace axo
