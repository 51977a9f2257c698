// printf into a std::string, for the planner's text explanations
// (explain.cc, training_explain.cc): format("%.2f s", t).
#pragma once

#include <cstdio>
#include <string>

namespace axo {

// One line or a few: the text is cut at 511 characters.
template <typename... Values>
std::string format(const char* pattern, Values... values) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, pattern, values...);
  return buffer;
}

}  // namespace axo
