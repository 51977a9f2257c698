// Typed reads of config.json fields (see hf_fields.h).
#include "model/hf_fields.h"

#include <cctype>

#include "model/error.h"

namespace axo {

int64_t hf_int(const nlohmann::json& config, std::initializer_list<const char*> keys, const std::string& source,
               std::optional<int64_t> fallback) {
  for (const char* key : keys) {
    if (!config.contains(key) || config[key].is_null()) continue;
    const nlohmann::json& v = config[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      throw InputError(source + ": field '" + key + "': expected a positive integer, got " + v.dump());
    }
    return v.get<int64_t>();
  }
  if (fallback) return *fallback;
  std::string names;  // every family's name for it (GPT-2's n_embd for hidden_size)
  for (const char* key : keys) names += std::string(names.empty() ? "'" : "' or '") + key;
  throw InputError(source + ": field " + names + "': missing from the config.json");
}

std::string hf_string(const nlohmann::json& config, const char* key, const std::string& fallback,
                      const std::string& source) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_string()) throw InputError(source + ": field '" + key + "': expected a string");
  return config[key].get<std::string>();
}

bool hf_bool(const nlohmann::json& config, const char* key, bool fallback, const std::string& source) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_boolean()) throw InputError(source + ": field '" + key + "': expected true or false");
  return config[key].get<bool>();
}

double hf_number(const nlohmann::json& config, const char* key, double fallback, const std::string& source) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_number()) throw InputError(source + ": field '" + key + "': expected a number");
  return config[key].get<double>();
}

std::string hf_first_architecture(const nlohmann::json& config) {
  if (!config.contains("architectures") || !config["architectures"].is_array() || config["architectures"].empty() ||
      !config["architectures"][0].is_string()) {
    return "";
  }
  return config["architectures"][0].get<std::string>();
}

std::string hf_model_type(const nlohmann::json& config, const std::string& source) {
  std::string type = hf_string(config, "model_type", "", source);
  if (type.empty()) type = hf_first_architecture(config);
  for (char& c : type) c = char(std::tolower((unsigned char)c));
  return type;
}

}  // namespace axo
