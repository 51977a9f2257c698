// A validation folder's corpus and sets (see validation_inputs.h).
#include "planner/validation_inputs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "model/error.h"
#include "model/yaml_fields.h"

namespace axo {

ValidationInputs find_validation_inputs(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".yaml" && it->is_regular_file(error)) files.push_back(it->path().string());
  }
  if (error) throw InputError(folder + ": cannot read the validation folder (" + error.message() + ")");
  std::sort(files.begin(), files.end());
  ValidationInputs inputs;
  for (const std::string& path : files) {
    const bool is_corpus = load_yaml_file(path)["corpus"].IsDefined();
    if (is_corpus && inputs.corpus.empty()) inputs.corpus = path;
    if (!is_corpus) inputs.sets.push_back(path);
  }
  return inputs;
}

void reject_sets_named_as_corpus_sources(const std::vector<std::string>& sets, const std::vector<CorpusCase>& corpus) {
  for (const std::string& path : sets) {
    const std::string group = source_of(std::filesystem::path(path).stem().string());
    for (const CorpusCase& c : corpus) {
      if (c.source == group) {
        throw InputError(path + ": its file name makes it source '" + group +
                         "', a published source of the corpus, whose runs it would join: rename the file");
      }
    }
  }
}

}  // namespace axo
