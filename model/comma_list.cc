// Comma-separated option values (see comma_list.h).
#include "model/comma_list.h"

#include <sstream>

#include "model/error.h"

namespace axo {

std::string trim_spaces(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> comma_list(const std::string& text, const std::string& option) {
  std::vector<std::string> items;
  if (trim_spaces(text).empty()) return items;
  std::stringstream list(text + ",");  // the trailing comma ends the last item, empty or not
  for (std::string item; std::getline(list, item, ',');) {
    if (trim_spaces(item).empty()) {
      throw InputError(option + ": '" + text + "': an empty item (two commas, or one at an end)");
    }
    items.push_back(trim_spaces(item));
  }
  return items;
}

}  // namespace axo
