// `axo validate` end to end: the summary per source and GPU type, the
// unexpressible runs, the memory misses, --csv with every run, --fit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "model/presets.h"
#include "tests/file_text.h"
#include "tests/run_command.h"

namespace {

namespace fs = std::filesystem;

// --machine prices the validation sets on that profile and says the published runs keep theirs.
TEST(ValidateCli, MachineReplacesTheSetsProfilesOnly) {
  const fs::path csv = fs::temp_directory_path() / ("axo_validate_machine_" + std::to_string(::getpid()) + ".csv");
  const auto r = axo::testing::run_axo("validate --machine perlmutter --csv " + csv.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("--machine perlmutter prices the validation sets above; the published runs below keep"),
            std::string::npos) << r.output;
  std::ifstream in(csv);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(csv);
  // The sets' runs priced on another profile are labelled so, apart from A100-80's own in the summary.
  EXPECT_NE(text.str().find(",korthikanti2022_table5,A100-80 on perlmutter,perlmutter,"), std::string::npos);
  EXPECT_NE(text.str().find(",dgxc,H100-80,dgx-h100,"), std::string::npos);
  EXPECT_NE(r.output.find("korthikanti2022_table5   A100-80 on perlmutter"), std::string::npos) << r.output;
  // --machine naming the sets' own preset labels nothing.
  const auto own = axo::testing::run_axo("validate --machine selene");
  EXPECT_NE(own.output.find("korthikanti2022_table5   A100-80    "), std::string::npos) << own.output;
  EXPECT_EQ(own.output.find(" on selene"), std::string::npos) << own.output;
  // A set whose own profile is not installed is priced on --machine's alone.
  std::ifstream table5(axo::config_dir() + "/validation/korthikanti2022_table5.yaml");
  std::string set, line;
  while (std::getline(table5, line)) set += (line.rfind("machine:", 0) == 0 ? "machine: mycluster" : line) + "\n";
  const fs::path elsewhere = fs::temp_directory_path() / ("axo_validate_set_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(elsewhere) << set;
  const auto priced = axo::testing::run_axo("validate --set " + elsewhere.string() + " --machine selene");
  fs::remove(elsewhere);
  EXPECT_EQ(priced.code, 0) << priced.output;
  EXPECT_NE(priced.output.find("A100-80 on selene"), std::string::npos) << priced.output;
}

TEST(ValidateCli, SummaryCsvAndFit) {
  const fs::path csv = fs::temp_directory_path() / ("axo_validate_" + std::to_string(::getpid()) + ".csv");
  const auto r = axo::testing::run_axo("validate --fit --csv " + csv.string());
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* expected : {"Korthikanti et al. 2022, Table 5", "Published runs (", "source", "mean |err|",
                               "dgxc ", "mpt ", "torchtitan ", "korthikanti2022_table5", "narayanan2021_table1", "Every published run is expressed",
                               "do not fit", "Fitted per GPU type", "(measured - predicted) / predicted",
                               "LOSO mean|e|", "band: "}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  std::ifstream in(csv);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(csv);
  const std::string content = text.str();
  EXPECT_EQ(content.rfind("name,source,gpu_type,machine,quantity,predicted,measured,measured_from,error_pct,", 0), 0u);
  // A header, 18 comparisons of the two Korthikanti tables, 10 of Narayanan's, 335 published runs.
  EXPECT_EQ(std::count(content.begin(), content.end(), '\n'), 1 + 18 + 10 + 335);
  // fp8 rows are priced (expressed, with an error).
  EXPECT_NE(content.find("dgxc_gpt3_175b_fp8_128xH100_v25.02,dgxc,H100-80,dgx-h100,iteration (s),"), std::string::npos);
  EXPECT_EQ(content.find("fp8 GEMMs"), std::string::npos);
  // GB200 rows run on the NVL72 preset; the Llama 3.1 405B rows take their recompute from the
  // NeMo recipe they ran (public-runs.yaml recipes:).
  EXPECT_NE(content.find("dgxc_nemotron4_340b_bf16_128xGB200_v25.05.05,dgxc,GB200,gb200-nvl72,iteration (s),"),
            std::string::npos);
  EXPECT_EQ(content.find("dgxc_llama31_405b_bf16_128xGB200_v25.05.05,dgxc,GB200,gb200-nvl72,iteration (s),,"),
            std::string::npos);
  EXPECT_NE(content.find("dgxc_llama31_405b_bf16_128xGB200_v25.05.05,dgxc,GB200,gb200-nvl72,iteration (s),"),
            std::string::npos);
}

// --explain NAME: one run's prediction cost by cost, with its measured time; an unknown or
// unexpressible name is a usage error that says which.
TEST(ValidateCli, ExplainsOneRunCostByCost) {
  const auto r = axo::testing::run_axo("validate --explain mpt_1b_h100_80gb_8gpu_seq2048_gbs112_amp_bf16");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* expected : {"mpt_1b_h100_80gb_8gpu_seq2048_gbs112_amp_bf16 (mpt, H100-80 on dgx-h100): iteration (s) measured 0.631",
                               "Configuration: pipeline=1 data=1", "z=8", "reduce_scatter block dW",
                               "Iteration breakdown", "Memory per GPU"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  EXPECT_EQ(r.output.find("Korthikanti et al. 2022, Table 5"), std::string::npos);  // only the one run
  EXPECT_NE(axo::testing::run_axo("validate --explain \"175B full\"").output.find("iteration (s)"), std::string::npos);
  const auto unknown = axo::testing::run_axo("validate --explain no_such_run");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.output.find("no validation point or corpus row is named 'no_such_run'"), std::string::npos)
      << unknown.output;
  // Priced on --machine: the label says so once.
  const auto elsewhere = axo::testing::run_axo("validate --explain \"175B full\" --machine dgx-h100");
  EXPECT_NE(elsewhere.output.find("175B full (korthikanti2022_table5, A100-80 on dgx-h100):"), std::string::npos)
      << elsewhere.output;
  const auto with_fit = axo::testing::run_axo("validate --fit --explain \"175B full\"");  // one or the other
  EXPECT_EQ(with_fit.code, 2);
  EXPECT_NE(with_fit.output.find("--explain"), std::string::npos) << with_fit.output;
  // torchtitan's per-layer checkpointing: full recompute of half the layers.
  const auto per_layer = axo::testing::run_axo("validate --explain torchtitan_llama38b_64xA100_lbs1_selective");
  EXPECT_EQ(per_layer.code, 0) << per_layer.output;
  EXPECT_NE(per_layer.output.find("recompute=full recompute_layers=16"), std::string::npos) << per_layer.output;
  // A row a corpus leaves unexpressed says why, as a usage error.
  const fs::path dir = fs::temp_directory_path() / ("axo_validate_corpus_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "c.yaml") << "corpus: runs.csv\nfamilies:\n  - {match: GPT, mlp: gelu, vocab: 51200}\n"
                                   "machines:\n  - {source: t, gpu_type: A100-80, gpu: A100-80, machine: selene, "
                                   "attention: flash}\n";
  std::ofstream(dir / "runs.csv")
      << "name,model_family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,global_batch,gpu_type,gpus,TP,PP,DP,"
         "other_parallel,microbatch,recompute,sequence_parallel,precision,iter_time_s,tokens_per_s,confidence\n"
         "t_a,GPT x,4,512,8,,2048,,1024,32,A100-80,8,2,1,4,GA=4,2,not stated,no,bf16,1.5,,exact\n";
  const auto unexpressed = axo::testing::run_axo("validate --corpus " + (dir / "c.yaml").string() + " --explain t_a");
  fs::remove_all(dir);
  EXPECT_EQ(unexpressed.code, 2);
  EXPECT_NE(unexpressed.output.find("is not expressible: recompute not stated"), std::string::npos)
      << unexpressed.output;
}

// A per-layer point is compared on its forward and its backward: the explanation names both.
TEST(ValidateCli, ExplainNamesEveryQuantityOfThePoint) {
  const auto r = axo::testing::run_axo("validate --explain baseline");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("baseline (korthikanti2022_table4, A100-80 on selene): layer forward (ms) measured 7.7, "),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; layer backward (ms) measured 11.9, "), std::string::npos) << r.output;
}

// Usage errors of the sets: one given twice (its runs would count twice), a fit on another
// machine's prices (it would fit one GPU's figures to another's measurements), a point on a
// profile without its precision's rate (it priced NaN), two points of one name, and a name
// two sets share for --explain.
class ValidateSets : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  // A set of Korthikanti Table 5's 22B point under `name`, on `machine`, in FILE.
  std::string write_set(const std::string& file, const std::string& name, const std::string& machine,
                        const std::string& point_name = "22B full", int points = 1) const {
    std::ofstream out(dir_ / file);
    out << "name: " << name << "\nsource: test\nmachine: " << machine << "\ngpu: A100-80\npoints:\n";
    for (int i = 0; i < points; ++i) {
      out << "  - name: " << point_name << "\n    model: {name: m, layers: 48, hidden: 6144, heads: 64, seq_len: 2048, "
             "vocab: 51200, global_batch: 4, precision: bf16}\n    gpus: 8\n    config: {pipeline: 1, data: 1, x: 1, "
             "y: 8, z: 1, microbatch: 4, recompute: full, overlap: true, sequence_parallel: false, interleave: 1}\n"
             "    measured_s: 1.42\n";
    }
    return (dir_ / file).string();
  }
  fs::path dir_ = fs::temp_directory_path() / ("axo_validate_sets_" + std::to_string(::getpid()));
};

TEST_F(ValidateSets, RepeatedSetsAndFitOnAnotherMachineAreUsageErrors) {
  const std::string set = write_set("a.yaml", "a", "selene");
  const auto twice = axo::testing::run_axo("validate --set " + set + " --set " + set);
  EXPECT_EQ(twice.code, 2) << twice.output;
  EXPECT_NE(twice.output.find("given twice"), std::string::npos) << twice.output;
  const auto once = axo::testing::run_axo("validate --set " + set);
  EXPECT_EQ(once.code, 0) << once.output;
  EXPECT_NE(once.output.find(" over 1 comparison\n"), std::string::npos) << once.output;
  const auto fit = axo::testing::run_axo("validate --machine dgx-h100 --fit");
  EXPECT_EQ(fit.code, 2) << fit.output;
  EXPECT_NE(fit.output.find("--machine"), std::string::npos) << fit.output;
}

TEST_F(ValidateSets, APointWithoutItsPrecisionsRateIsRefusedNamingTheLine) {
  std::ifstream in(axo::config_dir() + "/machines/selene.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string profile = text.str();
  const size_t rates = profile.find("peak_tflops:");
  ASSERT_NE(rates, std::string::npos);
  profile.replace(rates, profile.find('\n', rates) - rates, "peak_tflops: {fp32: 19.5}");
  std::ofstream(dir_ / "fp32-only.yaml") << profile;
  // The set names its profile beside it.
  const auto r = axo::testing::run_axo("validate --set " + write_set("b.yaml", "b", "fp32-only.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find((dir_ / "b.yaml").string() + ":6:5: point '22B full': precision bf16: machine"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("nan"), std::string::npos) << r.output;
  // Priced on --machine: its file is named, not the preset's name alone.
  const std::string profile_path = (dir_ / "fp32-only.yaml").string();
  const auto given = axo::testing::run_axo("validate --set " + write_set("c.yaml", "c", "selene") + " --machine " + profile_path);
  EXPECT_EQ(given.code, 2) << given.output;
  EXPECT_NE(given.output.find("(priced on --machine " + profile_path + ")"), std::string::npos) << given.output;
}

TEST_F(ValidateSets, PointNamesAreUniqueAndExplainNamesAreUnambiguous) {
  const auto twice = axo::testing::run_axo("validate --set " + write_set("c.yaml", "c", "selene", "p", 2));
  EXPECT_EQ(twice.code, 2) << twice.output;
  EXPECT_NE(twice.output.find("c.yaml:11:5: point 'p': named twice (first at " + (dir_ / "c.yaml").string() + ":6:5)"), std::string::npos) << twice.output;
  const std::string one = write_set("d.yaml", "d", "selene", "shared"), two = write_set("e.yaml", "e", "selene", "shared");
  const auto ambiguous = axo::testing::run_axo("validate --set " + one + " --set " + two + " --explain shared");
  EXPECT_EQ(ambiguous.code, 2) << ambiguous.output;
  EXPECT_NE(ambiguous.output.find("'shared' names points of d and e"), std::string::npos) << ambiguous.output;
}

// A set's machine of another GPU type, a machine that is not there (without --machine to stand
// in), a file named as a published source, and an empty --explain are refused, naming what.
TEST_F(ValidateSets, SetsThatWouldBeGroupedWrongAreRefused) {
  std::string set = write_set("f.yaml", "f", "dgx-h100");  // gpu: A100-80
  auto r = axo::testing::run_axo("validate --set " + set);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(set + ":4:6: field 'gpu': A100-80 is not the GPU type of machine dgx-h100 (H100-80)"),
            std::string::npos) << r.output;
  set = write_set("g.yaml", "g", "nosuchmachine");
  r = axo::testing::run_axo("validate --set " + set);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(set + ":3:10: field 'machine': 'nosuchmachine' is neither a file nor a machine preset"),
            std::string::npos) << r.output;
  set = write_set("mpt_mine.yaml", "mine", "selene");
  r = axo::testing::run_axo("validate --set " + set);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("its file name makes it source 'mpt', a published source of the corpus"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("korthikanti"), std::string::npos) << "refused before any table\n" << r.output;
  r = axo::testing::run_axo("validate --explain ''");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("an empty value names no run"), std::string::npos) << r.output;
}

// A point's model may be a preset's name, as --model takes it; an unknown one is named at its line.
TEST_F(ValidateSets, APointsModelMayBeAPreset) {
  const auto set_of = [&](const std::string& file, const std::string& model) {
    std::ofstream(dir_ / file) << "name: p\nsource: test\nmachine: selene\ngpu: A100-80\npoints:\n"
                                  "  - name: small\n    model: " << model << "\n    gpus: 8\n"
                                  "    config: {pipeline: 1, data: 8, x: 1, y: 1, z: 1, microbatch: 1}\n"
                                  "    measured_s: 0.5\n";
    return (dir_ / file).string();
  };
  auto r = axo::testing::run_axo("validate --set " + set_of("preset.yaml", "gpt3-1.3b"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("small"), std::string::npos) << r.output;
  const std::string bad = set_of("nosuch.yaml", "gpt3-1.3");
  r = axo::testing::run_axo("validate --set " + bad);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(bad + ":7:12: field 'model': 'gpt3-1.3' is neither a file nor a model preset"),
            std::string::npos) << r.output;
}

// --csv naming a set, the corpus or the corpus's table would replace what validate reads.
TEST_F(ValidateSets, CsvOverAnInputIsAUsageError) {
  const std::string set = write_set("h.yaml", "h", "selene");
  auto r = axo::testing::run_axo("validate --set " + set + " --csv " + set);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--csv " + set + ": it is a validation set, which this command reads"), std::string::npos)
      << r.output;
  EXPECT_EQ(axo::testing::file_text(set).rfind("name: h\n", 0), 0u);
  // A copy of the corpus: were the check gone, the repository's table would be written over.
  for (const char* file : {"public-runs.yaml", "public-runs.csv"}) {
    fs::copy_file(axo::config_dir() + "/validation/" + file, dir_ / file, fs::copy_options::overwrite_existing);
  }
  const std::string table = (dir_ / "public-runs.csv").string();
  r = axo::testing::run_axo("validate --set " + set + " --corpus " + (dir_ / "public-runs.yaml").string() +
                            " --csv " + table);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("it is the corpus's table, which this command reads"), std::string::npos) << r.output;
  // The machine profiles it reads: --machine's, and a set's own (a file beside it).
  const std::string profile = (dir_ / "mine.yaml").string();
  fs::copy_file(axo::config_dir() + "/machines/selene.yaml", profile, fs::copy_options::overwrite_existing);
  r = axo::testing::run_axo("validate --set " + set + " --machine " + profile + " --csv " + profile);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("it is the --machine file, which this command reads"), std::string::npos) << r.output;
  const std::string own = write_set("own.yaml", "own", "mine.yaml");
  r = axo::testing::run_axo("validate --set " + own + " --csv " + profile);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("it is a validation set's machine, which this command reads"), std::string::npos)
      << r.output;
  EXPECT_EQ(axo::testing::file_text(profile), axo::testing::file_text(axo::config_dir() + "/machines/selene.yaml"));
}

TEST(ValidateCli, MissingCorpusIsAUsageError) {
  const auto r = axo::testing::run_axo("validate --corpus /nonexistent/corpus.yaml");
  EXPECT_EQ(r.code, 2) << r.output;
}

}  // namespace
