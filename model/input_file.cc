// Opening and reading a file the user names (see input_file.h).
#include "model/input_file.h"

#include <filesystem>
#include <sstream>

#include "model/error.h"

namespace axo {

std::ifstream open_input_file(const std::string& path, const std::string& what) {
  std::error_code error;
  // A folder opens as a stream on Linux and reads as empty: refused by name, not as bad content.
  if (std::filesystem::is_directory(path, error)) throw InputError(path + ": is a folder, not a " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the " + what);
  return in;
}

std::string read_input_file(const std::string& path, const std::string& what) {
  std::ifstream in = open_input_file(path, what);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace axo
