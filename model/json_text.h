// Parsing JSON that people or programs hand to axo (HF config.json, run.json):
// any malformed text, numbers too large for a double included, becomes an
// InputError naming the source, as do a key given twice in one object and
// nesting deeper than kMostJsonDepth.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace axo {

// The deepest nesting of arrays and objects accepted: run.json and config.json have a few levels.
constexpr int kMostJsonDepth = 64;

nlohmann::json parse_json_text(const std::string& text, const std::string& source);

}  // namespace axo
