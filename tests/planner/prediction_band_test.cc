// Tests of the error band `axo plan` puts on its predictions (planner/prediction_band.h).
#include "planner/prediction_band.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <unistd.h>

#include "model/error.h"
#include "model/presets.h"
#include "planner/validation.h"
#include "planner/validation_corpus.h"
#include "planner/validation_fit.h"

namespace axo {
namespace {

const std::string& validation_dir() {
  static const std::string dir = config_dir() + "/validation";
  return dir;
}

// The presets name GPU types as the corpus does: each corpus machine's
// gpu_type is the `gpu` its rows are grouped by.
TEST(PredictionBand, PresetsNameTheCorpusGpuTypes) {
  std::set<std::string> checked;
  for (const CorpusCase& c : load_corpus(validation_dir() + "/public-runs.yaml")) {
    if (c.machine.empty() || !checked.insert(c.machine + "/" + c.gpu).second) continue;
    EXPECT_EQ(load_machine(c.machine).gpu_type, c.gpu) << c.machine;
  }
  EXPECT_GE(checked.size(), 4u);
}

TEST(PredictionBand, H100RunsGiveABand) {
  const PredictionBand band = prediction_band(load_machine("dgx-h100").gpu_type, validation_dir());
  ASSERT_TRUE(band.band) << band.no_band;
  EXPECT_EQ(band.band->gpu, "H100-80");
  EXPECT_GT(band.band->runs, 20);
  EXPECT_LT(band.band->low_pct, band.band->high_pct);
  EXPECT_NE(band.text().find("published H100-80 runs"), std::string::npos) << band.text();
}

// The band a plan carries is the one `axo validate --fit` prints for the GPU
// type: the same fit, on every A100-80 entry (Korthikanti's per-layer times
// too), whose band counts the iteration times' residuals only.
TEST(PredictionBand, IsTheBandValidateFitPrints) {
  std::vector<ValidationEntry> entries;
  int layer_times = 0;
  for (const char* set : {"korthikanti2022_table4", "korthikanti2022_table5", "narayanan2021_table1"}) {
    const ValidationSet s = load_validation_set(validation_dir() + "/" + set + ".yaml");
    for (ValidationEntry& e : validate_set(s, load_machine(s.machine), set)) {
      layer_times += e.quantity != Quantity::iteration_s;
      entries.push_back(std::move(e));
    }
  }
  std::vector<CorpusCase> corpus = load_corpus(validation_dir() + "/public-runs.yaml");
  std::erase_if(corpus, [](const CorpusCase& c) { return c.gpu != "A100-80"; });
  for (ValidationEntry& e : validate_corpus(corpus)) entries.push_back(std::move(e));
  const std::vector<GpuFit> fits = fit_by_gpu(entries);
  ASSERT_EQ(fits.size(), 1u);
  ASSERT_TRUE(fits[0].band);
  const PredictionBand band = prediction_band("A100-80", validation_dir());
  ASSERT_TRUE(band.band) << band.no_band;
  EXPECT_EQ(band.text(), band_text(*fits[0].band));
  EXPECT_GT(layer_times, 0);
  const auto expressed = std::count_if(entries.begin(), entries.end(), [](const ValidationEntry& e) {
    return e.expressed() && e.quantity == Quantity::iteration_s;
  });
  EXPECT_EQ(band.band->runs, expressed);  // the per-layer times are fitted on, not banded
}

TEST(PredictionBand, WithoutRunsOrTypeThereIsNoneAndItSaysWhy) {
  const PredictionBand v100 = prediction_band(load_machine("summit").gpu_type, validation_dir());
  EXPECT_FALSE(v100.band);
  EXPECT_EQ(v100.text(), "no band: no published runs on V100-16 in " + validation_dir());
  // A GPU type the corpus has but for case and spaces is named.
  EXPECT_EQ(prediction_band("a100-80 ", validation_dir()).text(),
            "no band: no published runs on a100-80  in " + validation_dir() +
                " (the published runs name A100-80: GPU types are matched as written)");
  const PredictionBand none = prediction_band("", validation_dir());
  EXPECT_FALSE(none.band);
  EXPECT_NE(none.text().find("no band: "), std::string::npos);
}

// The band reads what validate reads, by its rules: a set named as a published source (which
// validate refuses, as it would join that source's runs) is refused here too, saying what for.
TEST(PredictionBand, ReadsTheFolderByValidatesRules) {
  namespace fs = std::filesystem;
  const fs::path copy = fs::temp_directory_path() / ("axo_band_" + std::to_string(::getpid()));
  fs::create_directories(copy);
  for (const auto& file : fs::directory_iterator(validation_dir())) {
    if (file.path().extension() == ".yaml" || file.path().extension() == ".csv") {
      fs::copy_file(file.path(), copy / file.path().filename());
    }
  }
  fs::copy_file(copy / "korthikanti2022_table5.yaml", copy / "mpt_mine.yaml");
  try {
    prediction_band("A100-80", copy.string());
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mpt_mine.yaml: its file name makes it source 'mpt'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(read for the error band on A100-80 from the published runs in " +
                                         copy.string() + ")"), std::string::npos) << e.what();
  }
  fs::remove(copy / "mpt_mine.yaml");
  EXPECT_TRUE(prediction_band("A100-80", copy.string()).band);
  fs::remove_all(copy);
}

}  // namespace
}  // namespace axo
