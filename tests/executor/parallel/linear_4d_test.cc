// The overlaps' names (executor/parallel/linear_4d.h): --overlap's text and run.json's.
#include "executor/parallel/linear_4d.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

// What --overlap reads, run.json writes: all three "on", none "off", else the list of those on.
TEST(Linear4d, OverlapTextReadsBackAsParsed) {
  EXPECT_EQ(overlap_text(Overlap{}), "on");
  EXPECT_EQ(overlap_text(Overlap::none()), "off");
  EXPECT_EQ(overlap_text(parse_overlap("none", "--overlap")), "off");
  const Overlap two = parse_overlap("oag,oar", "--overlap");
  EXPECT_TRUE(two.all_reduce && two.all_gather && !two.reduce_scatter);
  EXPECT_EQ(overlap_text(two), "oar,oag");
  EXPECT_EQ(overlap_text(parse_overlap("oar,ors,oag", "--overlap")), "on");
  EXPECT_EQ(testing::input_error_of([] { parse_overlap("oar,fast", "--overlap"); }),
            "--overlap: expected none or a list of oar, ors, oag; got 'fast'");
}

}  // namespace
}  // namespace axo
