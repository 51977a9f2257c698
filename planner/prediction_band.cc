// The error band of a GPU type's predictions (see prediction_band.h).
#include "planner/prediction_band.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "model/presets.h"
#include "model/yaml_fields.h"
#include "planner/validation.h"
#include "planner/validation_fit.h"

namespace axo {

namespace {

// The expressed published entries on `gpu`, the corpus's rows and the
// validation sets' points (per-layer times too: `axo validate --fit` fits the
// GPU type on them all); `published` counts the iteration times, expressed or not.
std::vector<ValidationEntry> published_entries(const std::string& gpu, const std::string& dir, size_t& published) {
  published = 0;
  std::vector<std::string> files;
  std::error_code error;  // no validation folder: no published runs (the caller says "no band")
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".yaml") files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<ValidationEntry> entries;
  for (const std::string& path : files) {
    std::vector<ValidationEntry> found;
    if (load_yaml_file(path)["corpus"].IsDefined()) {
      std::vector<CorpusCase> cases = load_corpus(path);
      std::erase_if(cases, [&gpu](const CorpusCase& c) { return c.gpu != gpu; });
      found = validate_corpus(cases);
    } else {
      const ValidationSet set = load_validation_set(path);
      if (set.gpu != gpu) continue;
      found = validate_set(set, set_machine(set), std::filesystem::path(path).stem().string());
    }
    for (ValidationEntry& e : found) {
      if (e.quantity == Quantity::iteration_s) ++published;
      if (e.expressed()) entries.push_back(std::move(e));
    }
  }
  return entries;
}

}  // namespace

std::string PredictionBand::text() const { return band ? band_text(*band) : no_band; }

PredictionBand prediction_band(const std::string& gpu_type, const std::string& validation_dir) {
  PredictionBand result;
  if (gpu_type.empty()) {
    result.no_band = "no band: the machine profile names no GPU type (gpu_type)";
    return result;
  }
  size_t published = 0;
  const std::vector<ValidationEntry> runs = published_entries(gpu_type, validation_dir, published);
  if (published == 0) {
    result.no_band = "no band: no published runs on " + gpu_type;
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
