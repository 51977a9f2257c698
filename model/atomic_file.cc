// Atomic file writing (see atomic_file.h).
#include "model/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace axo {

namespace {

// errno of the call that just failed (EIO should it have left errno unset).
int last_error() { return errno != 0 ? errno : EIO; }

// The runtime failure for `path`: what failed, and the OS's reason for `error` (an errno value).
[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(error));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) fail(path, "cannot write (cannot create " + temporary + ")", last_error());
  int error = 0;
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0 ||
      ::fsync(fileno(file)) != 0) {
    error = last_error();
  }
  if (std::fclose(file) != 0 && error == 0) error = last_error();
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error = last_error();
  if (error != 0) {
    std::remove(temporary.c_str());
    fail(path, "writing failed", error);
  }
}

}  // namespace axo
