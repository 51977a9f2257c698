// The error band of a GPU type's predictions (see prediction_band.h).
#include "planner/prediction_band.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

#include "model/error.h"
#include "model/presets.h"
#include "planner/validation.h"
#include "planner/validation_fit.h"
#include "planner/validation_inputs.h"

namespace axo {

namespace {

// The expressed published entries on `gpu`, the corpus's rows and the
// validation sets' points (per-layer times too: `axo validate --fit` fits the
// GPU type on them all); `published` counts the iteration times, expressed or not.
std::vector<ValidationEntry> published_entries(const std::string& gpu, const std::vector<std::string>& sets,
                                              std::vector<CorpusCase> corpus, size_t& published) {
  std::vector<ValidationEntry> found;
  for (const std::string& path : sets) {
    const ValidationSet set = load_validation_set(path);
    if (set.gpu != gpu) continue;
    const auto points = validate_set(set, set_machine(set), std::filesystem::path(path).stem().string());
    found.insert(found.end(), points.begin(), points.end());
  }
  std::erase_if(corpus, [&gpu](const CorpusCase& c) { return c.gpu != gpu; });
  const auto rows = validate_corpus(corpus);
  found.insert(found.end(), rows.begin(), rows.end());
  published = size_t(std::count_if(found.begin(), found.end(),
                                   [](const ValidationEntry& e) { return e.quantity == Quantity::iteration_s; }));
  std::erase_if(found, [](const ValidationEntry& e) { return !e.expressed(); });
  return found;
}

// `text` lowercased, without spaces.
std::string folded(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// " (the published runs name A100-80: GPU types are matched as written)" where `gpu_type` is one of
// the corpus's but for case and spaces; else "".
std::string near_gpu_type_note(const std::string& gpu_type, const std::vector<CorpusCase>& corpus) {
  for (const CorpusCase& c : corpus) {
    if (c.gpu != gpu_type && folded(c.gpu) == folded(gpu_type)) {
      return " (the published runs name " + c.gpu + ": GPU types are matched as written)";
    }
  }
  return "";
}

}  // namespace

std::string PredictionBand::text() const { return band ? band_text(*band) : no_band; }

PredictionBand prediction_band(const std::string& gpu_type, const std::string& validation_dir) {
  PredictionBand result;
  if (gpu_type.empty()) {
    result.no_band = "no band: the machine profile names no GPU type (gpu_type)";
    return result;
  }
  if (!std::filesystem::is_directory(validation_dir)) {
    result.no_band = "no band: no validation folder " + validation_dir + " (its published runs make the band)";
    return result;
  }
  size_t published = 0;
  std::vector<ValidationEntry> runs;
  std::vector<CorpusCase> corpus;
  try {  // validate's inputs and rules, so the band is made of the runs it reports
    const ValidationInputs inputs = find_validation_inputs(validation_dir);
    if (!inputs.corpus.empty()) corpus = load_corpus(inputs.corpus);
    reject_sets_named_as_corpus_sources(inputs.sets, corpus);
    runs = published_entries(gpu_type, inputs.sets, corpus, published);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + " (read for the error band on " + gpu_type +
                     " from the published runs in " + validation_dir + ")");
  }
  if (published == 0) {
    result.no_band = "no band: no published runs on " + gpu_type + " in " + validation_dir +
                     near_gpu_type_note(gpu_type, corpus);
    return result;
  }
  const auto costed = std::count_if(runs.begin(), runs.end(),
                                    [](const ValidationEntry& e) { return e.quantity == Quantity::iteration_s; });
  if (costed == 0) {
    result.no_band = "no band: none of the " + std::to_string(published) + " published " + gpu_type +
                     " runs can be costed yet (axo validate says why)";
    return result;
  }
  const GpuFit fit = fit_by_gpu(runs).front();
  result.band = fit.band;
  if (result.band) return result;
  result.no_band = "no band: the " + std::to_string(costed) + " published " + gpu_type + " runs " + no_band_reason(fit);
  return result;
}

}  // namespace axo
