// Which files of a validation folder (configs/validation) `axo validate` and
// the error band `axo plan` prints read: the corpus, the one YAML file with
// `corpus:`, and the validation sets, every other YAML file. One rule for both,
// so that the band is made of the runs validate reports.
#pragma once

#include <string>
#include <vector>

#include "planner/validation_corpus.h"

namespace axo {

struct ValidationInputs {
  std::string corpus;  // empty where the folder has none
  std::vector<std::string> sets;
};

// The folder's corpus and sets, sorted by name; InputError where it cannot be read.
ValidationInputs find_validation_inputs(const std::string& folder);

// InputError where a set's file name makes it a published source of `corpus` (sets are grouped by
// their file name's first word: mpt_mine.yaml would join mpt's runs, and their band).
void reject_sets_named_as_corpus_sources(const std::vector<std::string>& sets, const std::vector<CorpusCase>& corpus);

}  // namespace axo
