// Finding model and machine presets by name.
//
// Presets live in configs/models/NAME.yaml and configs/machines/NAME.yaml
// under the config directory: $AXO_CONFIG_DIR when set, else the source
// tree's configs/ (compiled in). A name that is an existing file path is used
// as it is, so every --model and --machine option takes either.
#pragma once

#include <string>
#include <vector>

#include "model/machine_profile.h"
#include "model/transformer_spec.h"

namespace axo {

std::string config_dir();
// Preset names (file names without .yaml) of `kind` ("models", "machines"), sorted.
std::vector<std::string> list_presets(const std::string& kind);
// A file path as given, or the preset's path; InputError listing the presets otherwise.
std::string resolve_preset(const std::string& kind, const std::string& name_or_path);

// A model preset or file with the command line's overrides applied (transformer_spec.h).
TransformerSpec load_model(const std::string& name_or_path, const SpecOverrides& overrides = {});
MachineProfile load_machine(const std::string& name_or_path);

}  // namespace axo
