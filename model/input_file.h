// Opening and reading a file the user names: one place for the refusals every
// reader shares (a folder, a file that cannot be opened), each naming the path.
#pragma once

#include <fstream>
#include <string>

namespace axo {

// `path` opened for reading in binary; InputError "<path>: is a folder, not a <what>" or
// "<path>: cannot open the <what>" where it is not a readable file.
std::ifstream open_input_file(const std::string& path, const std::string& what = "file");

// Every byte of `path` (open_input_file's refusals).
std::string read_input_file(const std::string& path, const std::string& what = "file");

}  // namespace axo
