// Rows with equal numbers and the text that names a variant.
#include "planner/row_folding.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

TEST(RowFolding, SameNumbersMeansEveryNumber) {
  Breakdown a;
  a.compute = 1.5, a.tp_comm = 0.25, a.iter_time = 1.75, a.tflops_per_gpu = 120, a.pct_peak = 38;
  a.memory.weights = 1e9, a.memory.activations = 3e9, a.fits = true;
  Breakdown b = a;
  EXPECT_TRUE(same_numbers(a, b));
  b.compute = 1.5 * (1 + 1e-14);  // the same sum in another order
  EXPECT_TRUE(same_numbers(a, b));
  b = a;
  b.memory.comm_buffers = 1;  // one byte of buffers more
  EXPECT_FALSE(same_numbers(a, b));
  b = a;
  b.tp_comm = 0.2, b.bubble = 0.05;  // the same total, split otherwise
  EXPECT_FALSE(same_numbers(a, b));
}

TEST(RowFolding, NamesOnlyTheFieldsThatDiffer) {
  ParallelConfig shown;
  shown.y = 8;
  ParallelConfig overlap_off = shown;
  overlap_off.overlap = false;
  EXPECT_EQ(variant_text(shown, overlap_off), "overlap=off");
  ParallelConfig reordered = overlap_off;
  reordered.order = parse_order("yxzcdp", "test");
  EXPECT_EQ(variant_text(shown, reordered), "overlap=off,order=yxzcdp");
  EXPECT_EQ(variants_text(shown, {overlap_off, reordered}), "overlap=off; overlap=off,order=yxzcdp");
  EXPECT_EQ(variants_text(shown, {}), "");
}

}  // namespace
}  // namespace axo
