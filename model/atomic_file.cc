// Atomic file writing (see atomic_file.h).
#include "model/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace axo {

namespace {

// errno of the call that just failed (EIO should it have left errno unset).
int last_error() { return errno != 0 ? errno : EIO; }

// The runtime failure for `path`: what failed, and the OS's reason for `error` (an errno value).
[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(error));
}

namespace fs = std::filesystem;

// The file a write to `path` lands in: a symbolic link's target (followed
// through chains of links), so that the link stays a link.
fs::path link_target(const fs::path& path) {
  fs::path target = path;
  std::error_code error;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(target, error)); ++hops) {
    const fs::path next = fs::read_symlink(target, error);
    if (error) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

// A device, FIFO or socket (a pipe), or any path in /dev or /proc (/dev/stdout
// is a link to the process's open file, whatever that is): written in place,
// since renaming over it would replace the device or orphan the open file.
bool special_file(const fs::path& path) {
  const std::string text = path.lexically_normal().string();
  if (text.rfind("/dev/", 0) == 0 || text.rfind("/proc/", 0) == 0) return true;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  return fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status);
}

void write_in_place(const std::string& path, const std::string& text) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) fail(path, "cannot write", last_error());
  int error = 0;
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0) error = last_error();
  if (std::fclose(file) != 0 && error == 0) error = last_error();
  if (error != 0) fail(path, "writing failed", error);
}

}  // namespace

void write_file_atomically(const std::string& requested, const std::string& text) {
  if (special_file(requested)) return write_in_place(requested, text);
  const std::string path = link_target(requested).string();
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
