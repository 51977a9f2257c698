// Preset lookup (see presets.h).
#include "model/presets.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "model/error.h"

namespace axo {

namespace fs = std::filesystem;

std::string config_dir() {
  const char* env = std::getenv("AXO_CONFIG_DIR");
  return env && *env ? env : AXO_DEFAULT_CONFIG_DIR;
}

std::vector<std::string> list_presets(const std::string& kind) {
  std::vector<std::string> names;
  const fs::path dir = fs::path(config_dir()) / kind;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    // A folder or a dangling link named *.yaml is no preset (resolve_preset would refuse it).
    if (entry.path().extension() == ".yaml" && entry.is_regular_file(error)) {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_preset(const std::string& kind, const std::string& name_or_path) {
  std::error_code error;
  if (fs::is_regular_file(name_or_path, error)) return name_or_path;
  // A path (./selene, ../models/x) names a file: it is not looked up among the presets.
  if (name_or_path.find('/') != std::string::npos) {
    throw InputError("'" + name_or_path + "': no such file (a preset is named without a folder)");
  }
  const fs::path preset = fs::path(config_dir()) / kind / (name_or_path + ".yaml");
  if (fs::is_regular_file(preset, error)) return preset.string();
  std::string known;
  for (const std::string& name : list_presets(kind)) known += (known.empty() ? "" : ", ") + name;
  throw InputError("'" + name_or_path + "' is neither a file nor a " + kind.substr(0, kind.size() - 1) +
                   " preset (presets in " + (fs::path(config_dir()) / kind).string() + ": " +
                   (known.empty() ? "none" : known) + ")");
}

namespace {

// A preset is named as its file, which `axo models` and `axo machines` list and --model and
// --machine take: a `name:` of another would print one name and look up another (a preset named
// as another, selene, would pass for it).
template <class Loaded>
Loaded check_preset_name(Loaded loaded, const std::string& name_or_path, const std::string& path) {
  if (path != name_or_path && loaded.name != name_or_path) {
    throw InputError(path + ": field 'name': '" + loaded.name + "' is not the preset's file name '" + name_or_path +
                     "': name it as its file");
  }
  return loaded;
}

}  // namespace

TransformerSpec load_model(const std::string& name_or_path, const SpecOverrides& overrides) {
  const std::string path = resolve_preset("models", name_or_path);
  return check_preset_name(load_transformer_spec(path, overrides), name_or_path, path);
}

MachineProfile load_machine(const std::string& name_or_path) {
  const std::string path = resolve_preset("machines", name_or_path);
  return check_preset_name(load_machine_profile(path), name_or_path, path);
}

}  // namespace axo
