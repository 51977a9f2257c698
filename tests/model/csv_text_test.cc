// CSV through libcsv: lines written (plain cells stay plain, others are quoted) and read back.
#include "model/csv_text.h"

#include <gtest/gtest.h>

#include "tests/input_error_of.h"

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

TEST(CsvText, ReadsWhatItWritesWithEachRecordsLine) {
  const std::string text = "name,note\n" + csv_line({"a", "two\nlines, \"quoted\""}) + "\n" + csv_line({"b", "c"});
  const CsvRecords csv = parse_csv(text, "t.csv");
  ASSERT_EQ(csv.rows.size(), 3u);
  EXPECT_EQ(csv.rows[1], (std::vector<std::string>{"a", "two\nlines, \"quoted\""}));
  EXPECT_EQ(csv.lines, (std::vector<size_t>{1, 3, 5}));  // the quoted cell's break and a blank line before b
}

// A spreadsheet's byte-order mark is no part of the first column's name.
TEST(CsvText, SkipsAByteOrderMark) {
  EXPECT_EQ(parse_csv("\xEF\xBB\xBFname,x\na,1\n", "t.csv").rows.front().front(), "name");
}

TEST(CsvText, MistakesNameTheLine) {
  EXPECT_EQ(testing::input_error_of([] { parse_csv("name,x\na,1\nb,\"1\"2\n", "t.csv"); })
                .rfind("t.csv:3: malformed CSV: a stray quote (a cell is quoted whole, a quote inside it doubled", 0),
            0u);
  // A quote opened on line 3 and a quote on line 4 that does not close it: both lines named.
  EXPECT_NE(testing::input_error_of([] { parse_csv("name,x\na,1\nb,\"open\nc,\"3\"x\n", "t.csv"); })
                .find("t.csv:4: malformed CSV: a stray quote") ,
            std::string::npos);
  EXPECT_NE(testing::input_error_of([] { parse_csv("name,x\na,1\nb,\"open\nc,\"3\"x\n", "t.csv"); })
                .find("(in the record from line 3: a quote opened there may be left open)"),
            std::string::npos);
  EXPECT_EQ(testing::input_error_of([] { parse_csv("name,TP,TP\na,1,2\n", "t.csv"); }),
            "t.csv:1: column 'TP' named twice in the header");
  EXPECT_EQ(testing::input_error_of([] { parse_csv("", "t.csv"); }), "t.csv: empty table (no header line)");
  EXPECT_EQ(testing::input_error_of([] { parse_csv("name,x,\na,1,\n", "t.csv"); }),
            "t.csv:1: column 3 has no name in the header");
  // A quote left open is an error at the line its record starts on, with or without a last line break,
  // not the rest of the file read as one cell.
  for (const char* end : {"", "\n"}) {
    const std::string open = "name,x\na,1\nb,\"2\nc,3" + std::string(end);
    EXPECT_EQ(testing::input_error_of([&] { parse_csv(open, "t.csv"); }),
              "t.csv:3: malformed CSV: a quoted cell left open (its closing quote never comes)")
        << testing::input_error_of([&] { parse_csv(open, "t.csv"); });
  }
}

}  // namespace
}  // namespace axo
