// Parsing JSON that people or programs hand to axo (HF config.json, run.json):
// any malformed text, numbers too large for a double included, becomes an
// InputError naming the source.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace axo {

nlohmann::json parse_json_text(const std::string& text, const std::string& source);

}  // namespace axo
