// AxoNN's three tensor-parallel overlaps, each switchable (train --overlap), and their names as
// --overlap reads them and run.json records them (model/run_schema.h's kOverlap).
//
// Where each has a collective to act on (executor/parallel/linear_4d.cc, gpt_stage.cc): OAR the
// backward's dX reduction over a layer's out group (Y for QKV and FC1, X for the transposed
// attention output and FC2), so where x·y > 1; ORS and OAG the Z group's dW reduce-scatter and
// weight all-gather, so where z > 1.
#pragma once

#include <string>

#include "model/parallel_config.h"

namespace axo {

struct Overlap {
  bool all_reduce = true;      // OAR: backward's dX reduction under the dW GEMM
  bool reduce_scatter = true;  // ORS: dW reduce-scatter left running under the next layer's backward
  bool all_gather = true;      // OAG: the next layer's weight all-gather prefetched
  static Overlap none() { return {false, false, false}; }
  bool operator==(const Overlap&) const = default;
};

// --overlap's text: "none" or a comma list of oar, ors, oag (InputError naming `option` otherwise).
Overlap parse_overlap(const std::string& text, const std::string& option);
// As run.json records the overlaps run: "on" (all three), "off" (none), or the list of those on.
std::string overlap_text(const Overlap& overlap);
// overlap_text's text back ("on", "off" or a list); InputError naming `where` otherwise.
Overlap recorded_overlap(const std::string& text, const std::string& where);
// Those of `overlap` that have a collective to act on in grid `c` (above): a run whose others
// differ ran the same.
Overlap acting_overlaps(const Overlap& overlap, const ParallelConfig& c);

}  // namespace axo
