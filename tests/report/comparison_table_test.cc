// The comparison as a table for people.
#include "report/comparison_table.h"

#include <gtest/gtest.h>

#include "tests/report/report_test_files.h"

namespace axo {
namespace {

TEST(ComparisonTable, OneLinePerComponentAndTotal) {
  MeasuredRun measured;
  measured.components = {1.5, 0, 0, 0, 0, 0, 0.5};
  measured.iteration_s = 2.0;
  const std::string table = comparison_table(compare(testing::breakdown_of(1.0, 0, 0, 0, 0, 0, 0.5), measured));
  EXPECT_NE(table.find("component"), std::string::npos);
  EXPECT_NE(table.find("compute          1.0000       1.5000      +0.5000    +50.0\n"), std::string::npos) << table;
  EXPECT_NE(table.find("tp_comm          0.0000       0.0000      +0.0000      n/a\n"), std::string::npos) << table;
  EXPECT_NE(table.find("total            1.5000       2.0000      +0.5000    +33.3\n"), std::string::npos) << table;
  size_t lines = 0;
  for (char ch : table) lines += ch == '\n';
  EXPECT_EQ(lines, 9u);
}

}  // namespace
}  // namespace axo
