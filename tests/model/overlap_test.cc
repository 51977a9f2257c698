// The overlaps (model/overlap.h): --overlap's text and run.json's, and where each acts.
#include "model/overlap.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "model/parallel_config.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

// What --overlap reads, run.json writes: all three "on", none "off", else the list of those on.
TEST(Overlap, TextReadsBackAsParsed) {
  EXPECT_EQ(overlap_text(Overlap{}), "on");
  EXPECT_EQ(overlap_text(Overlap::none()), "off");
  EXPECT_EQ(overlap_text(parse_overlap("none", "--overlap")), "off");
  const Overlap two = parse_overlap("oag,oar", "--overlap");
  EXPECT_TRUE(two.all_reduce && two.all_gather && !two.reduce_scatter);
  EXPECT_EQ(overlap_text(two), "oar,oag");
  EXPECT_EQ(overlap_text(parse_overlap("oar,ors,oag", "--overlap")), "on");
  EXPECT_NE(testing::input_error_of([] { parse_overlap("oar,", "--overlap"); }).find("an empty item"),
            std::string::npos);  // read as oar alone before
  EXPECT_EQ(testing::input_error_of([] { parse_overlap("oar,fast", "--overlap"); }),
            "--overlap: expected none or a list of oar, ors, oag; got 'fast'");
}

// run.json's record read back: on, off or the list; anything else named.
TEST(Overlap, RecordedTextReadsBack) {
  for (const Overlap o : {Overlap{}, Overlap::none(), Overlap{true, false, true}, Overlap{false, true, false}}) {
    EXPECT_EQ(recorded_overlap(overlap_text(o), "run.json: grid"), o) << overlap_text(o);
  }
  EXPECT_NE(testing::input_error_of([] { recorded_overlap("maybe", "run.json: grid"); }).find("run.json: grid"),
            std::string::npos);
  EXPECT_EQ(testing::input_error_of([] { recorded_overlap("", "run.json: grid"); }),
            "run.json: grid: expected none or a list of oar, ors, oag; got nothing");
}

// OAR acts where a layer's dX reduces (x·y > 1: Y's layers, X's transposed ones), ORS and OAG over Z.
TEST(Overlap, EachActsWhereItsGroupHasRanks) {
  ParallelConfig c;
  EXPECT_EQ(acting_overlaps(Overlap{}, c), Overlap::none());
  c.x = 2;
  EXPECT_EQ(acting_overlaps(Overlap{}, c), (Overlap{true, false, false}));
  c.x = 1, c.y = 2;
  EXPECT_EQ(acting_overlaps(Overlap{}, c), (Overlap{true, false, false}));
  c.y = 1, c.z = 2;
  EXPECT_EQ(acting_overlaps(Overlap{}, c), (Overlap{false, true, true}));
  c.y = 2;
  EXPECT_EQ(acting_overlaps(Overlap{false, true, false}, c), (Overlap{false, true, false}));
}

}  // namespace
}  // namespace axo