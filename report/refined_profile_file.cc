// The refined machine profile as a file (see refined_profile_file.h).
#include "report/refined_profile_file.h"

#include "model/atomic_file.h"


namespace axo {

std::string refined_profile_yaml(const RefinementResult& result, const YAML::Node& original,
                                 const std::vector<std::string>& run_paths) {
  MachineProfile profile = result.profile;
  const bool already_refined =
      profile.name.size() >= 8 && profile.name.compare(profile.name.size() - 8, 8, "-refined") == 0;
  if (!already_refined) profile.name += "-refined";
  YAML::Node extra;
  YAML::Node metadata;
  if (original.IsMap()) {
    // A const node's missing key is an invalid node: test it before asking its type.
    if (const YAML::Node m = original["metadata"]; m && m.IsMap()) metadata = YAML::Clone(m);
    if (const YAML::Node raw = original["raw"]; raw) extra["raw"] = YAML::Clone(raw);
  }
  YAML::Node refinement;
  for (size_t i = 0; i < kRefinementFactorNames.size(); ++i) {
    refinement["factors"][kRefinementFactorNames[i]] = result.factors[i];
  }
  for (const std::string& run : run_paths) refinement["runs"].push_back(run);
  refinement["rms_component_error_before"] = result.rms_error_before;
  refinement["rms_component_error_after"] = result.rms_error_after;
  metadata["refinement"] = refinement;
  extra["metadata"] = metadata;
  YAML::Emitter out;
  out << to_yaml(profile, extra);
  return std::string(out.c_str()) + "\n";
}

void write_refined_profile(const RefinementResult& result, const YAML::Node& original,
                           const std::vector<std::string>& run_paths, const std::string& path) {
  write_file_atomically(path, refined_profile_yaml(result, original, run_paths));
}

}  // namespace axo
