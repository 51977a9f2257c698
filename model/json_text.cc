// Parsing JSON input into InputErrors (see json_text.h).
#include "model/json_text.h"

#include <set>
#include <vector>

#include "model/error.h"

namespace axo {

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  // A key given twice in one object: nlohmann keeps the last, which silently drops the other.
  std::vector<std::set<std::string>> open_objects;
  std::string repeated;
  const auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    // An array or object opening at depth d (from 0) is the (d+1)-th level; printing deeper
    // values recurses past the stack.
    const bool opens = event == Event::array_start || event == Event::object_start;
    if (opens && depth >= kMostJsonDepth) {
      throw InputError(source + ": JSON nested deeper than " + std::to_string(kMostJsonDepth) +
                       " arrays and objects: no axo input has more than a few levels");
    }
    if (event == Event::object_start) open_objects.emplace_back();
    if (event == Event::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == Event::key && repeated.empty() && !open_objects.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  try {
    nlohmann::json parsed = nlohmann::json::parse(text, callback);
    if (!repeated.empty()) {
      throw InputError(source + ": field '" + repeated + "': given twice in one object (JSON would keep the "
                       "last and drop the other)");
    }
    return parsed;
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(source + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw InputError(source + ": malformed JSON: " + e.what());
  }
}

}  // namespace axo
