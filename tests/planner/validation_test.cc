// Predictions against Korthikanti et al. 2022 Table 5 with one Selene profile.
// The bar: under 3% mean and 6% worst error (Calculon: 3.65% / 8.87%).
#include "planner/validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "model/error.h"
#include "model/presets.h"
#include "planner/validation_summary.h"

namespace axo {
namespace {

std::vector<ValidationEntry> table(const std::string& stem) {
  const ValidationSet set = load_validation_set(config_dir() + "/validation/" + stem + ".yaml");
  return validate_set(set, load_machine(set.machine), stem);
}

TEST(Validation, Korthikanti2022Table5) {
  const auto entries = table("korthikanti2022_table5");
  ASSERT_EQ(entries.size(), 8u);
  std::vector<double> errors;
  for (const ValidationEntry& e : entries) {
    EXPECT_EQ(e.quantity, Quantity::iteration_s);
    EXPECT_EQ(e.gpu, "A100-80");
    EXPECT_EQ(e.group, "korthikanti2022");
    EXPECT_LT(std::fabs(e.error_pct), 6.0) << e.name;
    EXPECT_TRUE(e.fits) << e.name;  // every published run ran
    errors.push_back(e.error_pct);
  }
  EXPECT_LT(error_stats(errors).mean_abs_pct, 3.0);
  EXPECT_LT(std::fabs(error_stats(errors).worst_pct), 6.0);
}

// Per-layer times of the 22B model (Table 4), a finer check of the same
// profile: every forward and backward within 4% (the figures are chosen on
// both tables; before the 2022 code's backward overlap was priced, its
// backwards were 5-8% slow).
TEST(Validation, Korthikanti2022Table4PerLayer) {
  const auto entries = table("korthikanti2022_table4");
  ASSERT_EQ(entries.size(), 10u);
  for (const ValidationEntry& e : entries) {
    EXPECT_NE(e.quantity, Quantity::iteration_s);
    EXPECT_LT(std::fabs(e.error_pct), 4.0) << e.name << " " << to_string(e.quantity);
  }
}

// Narayanan et al. 2021 Table 1 (Megatron-LM of 2021 on Selene), priced with the settings of
// NVIDIA's script for that table and nothing fitted to it: held under where it stands (4.8% mean,
// every run too fast: the 2021 code ran the same configuration about 8% slower than Korthikanti's
// 2022 code, which selene's figures were chosen on, and its synchronous tensor-parallel
// all-reduces are a quarter of that), and every published run fits.
TEST(Validation, Narayanan2021Table1) {
  const auto entries = table("narayanan2021_table1");
  ASSERT_EQ(entries.size(), 10u);
  std::vector<double> errors;
  for (const ValidationEntry& e : entries) {
    EXPECT_EQ(e.group, "narayanan2021");
    EXPECT_LT(std::fabs(e.error_pct), 10.0) << e.name;
    EXPECT_TRUE(e.fits) << e.name;
    errors.push_back(e.error_pct);
  }
  EXPECT_LT(error_stats(errors).mean_abs_pct, 6.0);
}

// A set's `stack` replaces the preset's; a point's own replaces the set's: the runs without a
// pipeline ran PyTorch's DDP (--DDP-impl torch), whose all-reduce overlaps the backward.
TEST(Validation, APointsStackReplacesTheSets) {
  const auto entries = table("narayanan2021_table1");
  for (const ValidationEntry& e : entries) {
    const GradReduce expected = e.config.pipeline == 1 ? GradReduce::overlapped : GradReduce::after_backward;
    EXPECT_EQ(e.profile.grad_reduce, expected) << e.name;
    EXPECT_EQ(e.profile.attention, AttentionKind::materialized) << e.name;
  }
}

// A wrong choice in a point's stack is refused naming the file, the field and the choices.
TEST(Validation, ABadStackKeyNamesFileAndField) {
  const std::string path = ::testing::TempDir() + "/bad_stack_set.yaml";
  std::ofstream(path) << "name: x\nsource: y\nmachine: selene\ngpu: A100-80\npoints:\n"
                         "  - {name: p, gpus: 8, measured_s: 1, stack: {attention: materialized, grad_reduce: later},\n"
                         "     model: {name: m, layers: 2, hidden: 256, heads: 4, seq_len: 128, vocab: 1000, global_batch: 8},\n"
                         "     config: {pipeline: 1, data: 1, x: 1, y: 8, z: 1, microbatch: 1}}\n";
  try {
    load_validation_set(path);
    FAIL() << "a bad grad_reduce was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("grad_reduce"), std::string::npos) << what;
    EXPECT_NE(what.find("after_backward"), std::string::npos) << what;
  }
}

// predict() on the entry's own profile is the prediction it was costed with;
// a profile with slower GEMMs predicts a longer time.
TEST(Validation, PredictRecostsOnAnotherProfile) {
  const auto entries = table("korthikanti2022_table5");
  const ValidationEntry& e = entries.front();
  EXPECT_DOUBLE_EQ(predict(e, e.profile), e.predicted);
  MachineProfile slower = e.profile;
  slower.gemm_max_efficiency *= 0.8;
  EXPECT_GT(predict(e, slower), e.predicted * 1.1);
}

TEST(Validation, CorpusEntriesCarryTheirMachineAndMemory) {
  const auto entries = validate_corpus(load_corpus(config_dir() + "/validation/public-runs.yaml"));
  ASSERT_EQ(entries.size(), 335u);
  int expressed = 0;
  for (const ValidationEntry& e : entries) {
    if (!e.expressed()) continue;
    ++expressed;
    EXPECT_EQ(e.profile.name, e.machine) << e.name;
    EXPECT_GT(e.predicted, 0) << e.name;
    EXPECT_GT(e.usable_GiB, 0) << e.name;
    EXPECT_DOUBLE_EQ(e.error_pct, 100 * (e.predicted - e.measured) / e.measured);
  }
  EXPECT_GT(expressed, 150);
}

// Every published run ran, so the memory model must fit it on its GPUs: torchtitan's FSDP
// with tensor parallelism (y > 1 and z > 1) too, its TP sequence-parallel over each Z rank's rows.
TEST(Validation, PublishedRunsFitTheirGpus) {
  const auto entries = validate_corpus(load_corpus(config_dir() + "/validation/public-runs.yaml"));
  int checked = 0, sequence_parallel_with_z = 0;
  for (const ValidationEntry& e : entries) {
    if (!e.expressed()) continue;
    ++checked;
    if (e.config.sequence_parallel && e.config.z > 1) ++sequence_parallel_with_z;
    EXPECT_TRUE(e.fits) << e.name << ": " << e.memory_GiB << " GiB > " << e.usable_GiB << " GiB usable";
  }
  EXPECT_GT(checked, 300);
  EXPECT_GE(sequence_parallel_with_z, 7);  // torchtitan's 2D rows: Llama 3.1 70B and 405B
}

// Issue 16's progress on the published runs, held: each source's mean |error|
// per GPU type stays under where the physics brought it, FSDP's copies and the
// H100-80 figures fitted on all that GPU type's runs, GB200's and the 500 W H100-96's GEMMs
// fitted on their runs (one source: an in-sample figure, no leave-one-source-out), the A100
// figures chosen with Korthikanti's backward overlap priced, and GEMMs quantized
// over the SMs' waves the latest (configs/validation/README.md's table, with headroom of about a point and a half
// for rows other work makes expressible). The target is 8% for each; H200's two
// Trainy runs are not there yet (configs/validation/README.md, "What is left").
TEST(Validation, CorpusMeanErrorsStayUnderTheirCeilings) {
  const auto groups = summarize(validate_corpus(load_corpus(config_dir() + "/validation/public-runs.yaml")));
  const std::map<std::pair<std::string, std::string>, double> ceilings = {
      {{"dgxc", "H100-80"}, 4.0},          {{"torchtitan", "A100-80"}, 3.5},  {{"torchtitan", "H100-96-HBM2e"}, 6.5},
      {{"mpt", "H100-80"}, 3.5},           {{"mpt", "A100-80"}, 6.0},         {{"mpt", "A100-40"}, 6.0},
      {{"dgxc", "GB200"}, 2.0},            {{"torchtitan", "H200"}, 11.0}};
  int checked = 0;
  for (const GroupStats& g : groups) {
    const auto ceiling = ceilings.find({g.source, g.gpu});
    if (ceiling == ceilings.end()) continue;
    ++checked;
    EXPECT_LT(g.stats.mean_abs_pct, ceiling->second) << g.source << " " << g.gpu;
  }
  EXPECT_EQ(checked, int(ceilings.size()));
}

}  // namespace
}  // namespace axo
