// Typed reads of a Hugging Face config.json's fields, for hf_config.cc and
// hf_architecture.cc: absent or null gives the fallback, a wrong type an
// InputError naming the field.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace axo {

// The first of `keys` present in `config` as a positive integer; InputError naming the first key
// where none is and there is no fallback.
int64_t hf_int(const nlohmann::json& config, std::initializer_list<const char*> keys, const std::string& source,
               std::optional<int64_t> fallback = std::nullopt);
std::string hf_string(const nlohmann::json& config, const char* key, const std::string& fallback,
                      const std::string& source);
bool hf_bool(const nlohmann::json& config, const char* key, bool fallback, const std::string& source);
double hf_number(const nlohmann::json& config, const char* key, double fallback, const std::string& source);

// Falcon's model_type, and RefinedWeb's before it.
inline constexpr std::array<std::string_view, 3> kFalconFamilies = {"falcon", "RefinedWeb", "RefinedWebModel"};

// The config's first architecture ("GemmaForCausalLM"), as written; "" where it names none.
std::string hf_first_architecture(const nlohmann::json& config);
// The config's model_type, else its first architecture, lowercased.
std::string hf_model_type(const nlohmann::json& config, const std::string& source);

// Whether the config's model_type, else its first architecture, names one of `families` (an
// architecture by its prefix: "gemmaforcausallm" is gemma's).
template <size_t N>
bool hf_family_in(const nlohmann::json& config, const std::array<std::string_view, N>& families,
                  const std::string& source) {
  const std::string type = hf_string(config, "model_type", "", source);
  if (!type.empty()) return std::find(families.begin(), families.end(), type) != families.end();
  const std::string architecture = hf_model_type(config, source);  // the first architecture, lowercased
  return std::any_of(families.begin(), families.end(), [&](std::string_view family) {
    return architecture.rfind(std::string(family) + "for", 0) == 0 ||
           architecture.rfind(std::string(family) + "model", 0) == 0;
  });
}

}  // namespace axo
