// The summary's arithmetic and grouping on a small fixture.
#include "planner/validation_summary.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

TEST(ValidationSummary, ErrorStatsByHand) {
  const ErrorStats s = error_stats({10, -20, 5});
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.mean_abs_pct, 35.0 / 3);
  EXPECT_DOUBLE_EQ(s.worst_pct, -20);  // the largest |error|, sign kept
  EXPECT_DOUBLE_EQ(s.bias_pct, -5.0 / 3);
  EXPECT_EQ(error_stats({}).count, 0);
}

ValidationEntry entry(const std::string& source, const std::string& gpu, double error, std::string why_not = "") {
  ValidationEntry e;
  e.name = source + "_" + gpu + "_" + std::to_string(int(error));
  e.source = source;
  e.gpu = gpu;
  e.error_pct = error;
  e.why_not = std::move(why_not);
  return e;
}

TEST(ValidationSummary, GroupsBySourceAndGpuSkippingUnexpressed) {
  const std::vector<ValidationEntry> entries = {
      entry("mpt", "A100-40", 4), entry("mpt", "H100-80", -8), entry("mpt", "A100-40", -6),
      entry("dgxc", "H100-80", 30, "fp8 GEMMs"), entry("dgxc", "H100-80", 12)};
  const auto groups = summarize(entries);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].source, "mpt");
  EXPECT_EQ(groups[0].gpu, "A100-40");
  EXPECT_EQ(groups[0].stats.count, 2);
  EXPECT_DOUBLE_EQ(groups[0].stats.mean_abs_pct, 5);
  EXPECT_DOUBLE_EQ(groups[0].stats.bias_pct, -1);
  EXPECT_DOUBLE_EQ(groups[0].stats.worst_pct, -6);
  EXPECT_EQ(groups[2].source, "dgxc");
  EXPECT_EQ(groups[2].stats.count, 1);  // the fp8 run is not counted
  EXPECT_DOUBLE_EQ(groups[2].stats.worst_pct, 12);
  const std::string table = summary_table(groups);
  EXPECT_NE(table.find("mpt                      A100-40             2        5.0%     -6.0%     -1.0%"),
            std::string::npos)
      << table;
  // A longer GPU label (a set priced on --machine) widens its column for every row.
  std::vector<GroupStats> labelled = groups;
  labelled[0].gpu = "A100-80 on summit";
  const std::string wide = summary_table(labelled);
  EXPECT_NE(wide.find("mpt                      A100-80 on summit      2"), std::string::npos) << wide;
  EXPECT_NE(wide.find("dgxc                     H100-80                1"), std::string::npos) << wide;
}

TEST(ValidationSummary, ListsUnexpressedRunsByReasonAndMemoryMisses) {
  std::vector<ValidationEntry> entries = {entry("dgxc", "H100-80", 0, "fp8 GEMMs"),
                                          entry("dgxc", "GB200", 0, "no preset"),
                                          entry("dgxc", "H100-80", 1, "fp8 GEMMs"), entry("mpt", "A100-40", 2)};
  const std::string list = unexpressed_list(entries);
  EXPECT_NE(list.find("2 x fp8 GEMMs:\n    dgxc_H100-80_0 dgxc_H100-80_1\n"), std::string::npos) << list;
  EXPECT_NE(list.find("1 x no preset:"), std::string::npos) << list;
  EXPECT_EQ(memory_misses(entries), "");
  entries[3].fits = false;
  entries[3].memory_GiB = 41.5;
  entries[3].usable_GiB = 34.7;
  entries[3].memory_caveat = "flash attention";
  const std::string misses = memory_misses(entries);
  EXPECT_NE(misses.find("mpt_A100-40_2"), std::string::npos) << misses;
  EXPECT_NE(misses.find("41.5 GiB >  34.7 GiB usable  (flash attention)"), std::string::npos) << misses;
}

}  // namespace
}  // namespace axo
