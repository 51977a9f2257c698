// Atomic file writing (see atomic_file.h).
#include "model/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
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

// A device, FIFO or socket (a pipe), or a path in /dev or /proc (/dev/stdout is a link to
// the process's open file, whatever that is; /dev/shm's files too): written in place, since
// renaming over it would replace the device or orphan the open file.
bool special_file(const fs::path& path) {
  const std::string text = path.lexically_normal().string();
  if (text.rfind("/dev/", 0) == 0 || text.rfind("/proc/", 0) == 0) return true;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  return fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status);
}

// Where a write to `path` lands: a symbolic link's target (followed through chains of links, so
// that each link stays a link), or nothing when it or some hop is special_file (write `path` in
// place). A cycle of links is the OS's ELOOP.
std::optional<fs::path> link_target(const fs::path& path) {
  fs::path target = path;
  std::error_code error;
  for (int hops = 0; !special_file(target) && fs::is_symlink(fs::symlink_status(target, error)); ++hops) {
    if (hops == 40) fail(path.string(), "cannot write", ELOOP);
    const fs::path next = fs::read_symlink(target, error);
    if (error) fail(path.string(), "cannot write", error.value());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  if (special_file(target)) return std::nullopt;
  return target;
}

void write_in_place(const std::string& path, const std::string& text) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) fail(path, "cannot write", last_error());
  int error = 0;
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0) error = last_error();
  if (std::fclose(file) != 0 && error == 0) error = last_error();
  if (error != 0) fail(path, "writing failed", error);
}

// Makes a rename into the folder holding `path` durable: until the folder is synced, a crash
// can lose the new name (and a pruned older checkpoint is already gone). Best effort: the file is
// whole and in place already, and a folder that cannot be read (write and search permission only)
// or synced (EINVAL, ENOTSUP) has nothing more to give.
void sync_folder(const fs::path& path) {
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string written_file(const std::string& path) {
  const std::optional<fs::path> target = link_target(path);
  return target ? target->string() : "";
}

void write_file_atomically(const std::string& requested, const std::string& text) {
  const std::optional<fs::path> target = link_target(requested);
  if (!target) return write_in_place(requested, text);
  const std::string path = target->string();
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
  sync_folder(*target);
}

}  // namespace axo
