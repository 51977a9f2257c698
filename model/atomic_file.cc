// Atomic file writing (see atomic_file.h).
#include "model/atomic_file.h"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "model/error.h"

namespace axo {

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) throw InputError(path + ": cannot write (cannot create " + temporary + ")");
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size() &&
                       std::fflush(file) == 0 && ::fsync(fileno(file)) == 0;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error(path + ": writing failed");
  }
}

}  // namespace axo
