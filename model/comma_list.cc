// Comma-separated option values (see comma_list.h).
#include "model/comma_list.h"

#include <sstream>

#include "model/error.h"

namespace axo {

std::vector<std::string> comma_list(const std::string& text, const std::string& option) {
  if (!text.empty() && (text.front() == ',' || text.back() == ',' || text.find(",,") != std::string::npos)) {
    throw InputError(option + ": '" + text + "': an empty item (two commas, or one at an end)");
  }
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) items.push_back(item);
  return items;
}

}  // namespace axo
