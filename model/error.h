// Error types shared by every axo library.
//
// InputError is a mistake in what the user gave us: an option, the content
// of a file, a configuration that cannot be built. Its message names the
// file, line and field (or the option) and what was expected; the command
// line prints it and exits with status 2. Any other exception is a runtime
// failure (exit status 1).
#pragma once

#include <stdexcept>
#include <string>

namespace axo {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// Model and machine names go into comments and job names of generated scripts (Slurm, Megatron):
// one line without control characters, or a line break there would start a shell command.
inline bool is_one_printable_line(const std::string& text) {
  for (char c : text) {
    if ((unsigned char)c < 0x20 || c == 0x7f) return false;
  }
  return true;
}
// What a name that is not one printable line is told.
inline constexpr const char* kNotOnePrintableLine = "control characters (a line break, a tab) are not allowed";

}  // namespace axo
