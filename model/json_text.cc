// Parsing JSON input into InputErrors (see json_text.h).
#include "model/json_text.h"

#include "model/error.h"

namespace axo {

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(source + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw InputError(source + ": malformed JSON: " + e.what());
  }
}

}  // namespace axo
