// The refined machine profile as a file: the same schema as every profile
// (to_yaml in model/machine_profile.h, so `axo plan --machine` reads it),
// named "<name>-refined", with the original file's `metadata` and `raw`
// measurements carried over and, under metadata.refinement, the fitted
// factors, the runs they were fitted to and the errors before and after.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "report/profile_refinement.h"

namespace axo {

// `original` is the profile file as parsed (a null node for none).
std::string refined_profile_yaml(const RefinementResult& result, const YAML::Node& original,
                                 const std::vector<std::string>& run_paths);
// Writes atomically (write_file_atomically).
void write_refined_profile(const RefinementResult& result, const YAML::Node& original,
                           const std::vector<std::string>& run_paths, const std::string& path);

}  // namespace axo
