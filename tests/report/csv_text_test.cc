// CSV lines through libcsv: plain cells stay plain, others are quoted.
#include "report/csv_text.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

TEST(CsvText, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_line({"a", "b"}), "a,b\n");
  EXPECT_EQ(csv_line({"plan.yaml vs run,1.json", "say \"hi\""}),
            "\"plan.yaml vs run,1.json\",\"say \"\"hi\"\"\"\n");
  EXPECT_EQ(csv_line({}), "\n");
}

TEST(CsvText, Numbers) {
  EXPECT_EQ(csv_number(0.125), "0.125");
  EXPECT_EQ(csv_number(1.0 / 3.0), "0.3333333333");
  EXPECT_EQ(csv_number(std::nullopt), "n/a");
}

}  // namespace
}  // namespace axo
