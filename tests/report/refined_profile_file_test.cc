// The refined profile file: readable as a profile, renamed, with the
// original metadata and the refinement recorded.
#include "report/refined_profile_file.h"

#include <gtest/gtest.h>

#include "model/presets.h"
#include "model/yaml_fields.h"
#include "tests/report/report_test_files.h"

namespace axo {
namespace {

TEST(RefinedProfileFile, RoundTripsAndRecordsTheRefinement) {
  RefinementResult result;
  result.profile = apply_refinement_factors(load_machine("selene"), {0.9, 0.8, 0.7, 1.1, 1.0});
  result.factors = {0.9, 0.8, 0.7, 1.1, 1.0};
  result.rms_error_before = 0.3;
  result.rms_error_after = 0.01;
  const YAML::Node original = load_yaml_text(
      "metadata: {host: node1, complete: true}\nraw: {gemm: [1, 2]}\n", "original.yaml");
  const testing::TemporaryFolder folder("refined_profile");
  const std::string path = folder.file("refined.yaml");
  write_refined_profile(result, original, {"r1.json", "r2.json"}, path);

  const MachineProfile back = load_machine_profile(path);
  EXPECT_EQ(back.name, "selene-refined");
  EXPECT_DOUBLE_EQ(back.gemm_max_efficiency, result.profile.gemm_max_efficiency);
  EXPECT_DOUBLE_EQ(back.memory_bound_efficiency, result.profile.memory_bound_efficiency);
  EXPECT_DOUBLE_EQ(back.nic_bandwidth_GBps, result.profile.nic_bandwidth_GBps);
  EXPECT_DOUBLE_EQ(back.low_latency.base_us, 6.6);  // the preset's NCCL protocol travels with it
  EXPECT_DOUBLE_EQ(back.low_latency.net_overhead_us, result.profile.low_latency.net_overhead_us);
  const YAML::Node file = load_yaml_file(path);
  EXPECT_EQ(file["metadata"]["host"].as<std::string>(), "node1");
  EXPECT_EQ(file["raw"]["gemm"].size(), 2u);
  const YAML::Node refinement = file["metadata"]["refinement"];
  EXPECT_DOUBLE_EQ(refinement["factors"]["network"].as<double>(), 0.7);
  EXPECT_EQ(refinement["runs"][1].as<std::string>(), "r2.json");
  EXPECT_DOUBLE_EQ(refinement["rms_component_error_after"].as<double>(), 0.01);

  // A profile file without metadata (a preset) gets one for the refinement.
  const YAML::Node preset = load_yaml_text("name: selene\n", "preset.yaml");
  const YAML::Node written = load_yaml_text(refined_profile_yaml(result, preset, {"r.json"}), "refined");
  EXPECT_EQ(written["metadata"]["refinement"]["runs"][0].as<std::string>(), "r.json");
  EXPECT_FALSE(written["raw"]);

  // Refining a refined profile keeps one suffix.
  result.profile = back;
  EXPECT_NE(refined_profile_yaml(result, YAML::Node(), {}).find("name: selene-refined\n"), std::string::npos);
}

}  // namespace
}  // namespace axo
