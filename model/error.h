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

}  // namespace axo
