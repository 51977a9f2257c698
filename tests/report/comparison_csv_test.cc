// The comparison CSV: its columns, values and "n/a".
#include "report/comparison_csv.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/report/report_test_files.h"

namespace axo {
namespace {

TEST(ComparisonCsv, ColumnsAndValues) {
  MeasuredRun measured;
  measured.components = {1.5, 0, 0.25, 0, 0, 0, 0.5};
  measured.iteration_s = 2.25;
  const Comparison c = compare(testing::breakdown_of(1.0, 0, 0, 0, 0, 0, 0.5), measured);
  const std::string expected =
      "component,predicted_s,measured_s,error_s,error_pct\n"
      "compute,1,1.5,0.5,50\n"
      "tp_comm,0,0,0,n/a\n"
      "bubble,0,0.25,0.25,n/a\n"
      "pp_comm,0,0,0,n/a\n"
      "dp_comm,0,0,0,n/a\n"
      "offload,0,0,0,n/a\n"
      "optimizer,0.5,0.5,0,0\n"
      "total,1.5,2.25,0.75,50\n";
  EXPECT_EQ(comparison_csv(c), expected);

  const testing::TemporaryFolder folder("comparison_csv");
  write_comparison_csv(c, folder.file("cost.csv"));
  std::ifstream in(folder.file("cost.csv"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), expected);
}

}  // namespace
}  // namespace axo
