// How the command line reports a failure on stderr (see error_line.h).
#include "tools/error_line.h"

#include <unistd.h>

#include <cstdio>

namespace axo::tools {

void print_error_line(const std::string& kind, const std::string& message) {
  std::fflush(stdout);  // what the command printed comes first, whole lines, not cut by the error
  const std::string line = "axo: " + kind + ": " + message + "\n";
  // One write(2): std::cerr is unbuffered and would write the pieces one by one.
  for (size_t at = 0; at < line.size();) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + at, line.size() - at);
    if (n <= 0) return;
    at += size_t(n);
  }
}

}  // namespace axo::tools
