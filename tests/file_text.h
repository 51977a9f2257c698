// A file's whole text, for tests that check what a command wrote or left alone.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace axo::testing {

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace axo::testing
