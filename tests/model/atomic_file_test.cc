// Tests for atomic file writing (model/atomic_file.h).
#include "model/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "model/error.h"

namespace axo {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("axo_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(AtomicFile, ReplacesTheContentAndLeavesNoTemporary) {
  const std::string path = temp_path("atomic.txt");
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second\n");
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "second");
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos);
  }
  std::remove(path.c_str());
}

// The message of the failure writing `path` throws: a runtime failure (exit 1), not a mistake in
// the input (an InputError, exit 2); "" (and a test failure) when the write succeeds.
std::string runtime_failure_writing(const std::string& path) {
  try {
    write_file_atomically(path, "x");
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(dynamic_cast<const InputError*>(&e), nullptr) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "writing " << path << " succeeded";
  return "";
}

// A write that fails is a runtime failure: the command line checks the folder up front
// (tools/output_path.h). The message names the path and the OS's reason.
TEST(AtomicFile, AMissingFolderIsARuntimeFailureNamingThePathAndTheReason) {
  const std::string path = temp_path("no-such-folder") + "/plan.yaml";
  const std::string message = runtime_failure_writing(path);
  EXPECT_EQ(message.find(path + ": cannot write"), 0u) << message;
  EXPECT_NE(message.find(std::strerror(ENOENT)), std::string::npos) << message;
}

TEST(AtomicFile, AFailedRenameNamesTheReasonAndLeavesNoTemporary) {
  const std::string path = temp_path("a-folder");
  std::filesystem::create_directories(path);  // rename cannot put a file in place of a folder
  const std::string message = runtime_failure_writing(path);
  EXPECT_EQ(message.find(path + ": writing failed: "), 0u) << message;
  EXPECT_GT(message.size(), (path + ": writing failed: ").size()) << message;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos);
  }
  std::filesystem::remove_all(path);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A symbolic link (through a chain of them) keeps being a link: its target gets the text.
TEST(AtomicFile, WritesThroughSymbolicLinks) {
  namespace fs = std::filesystem;
  const fs::path dir = temp_path("links");
  fs::create_directories(dir / "real");
  fs::create_symlink("real/target.csv", dir / "inner.csv");
  fs::create_symlink("inner.csv", dir / "outer.csv");
  write_file_atomically((dir / "outer.csv").string(), "linked\n");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir / "outer.csv")));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir / "inner.csv")));
  EXPECT_EQ(read_all((dir / "real/target.csv").string()), "linked\n");
  fs::remove_all(dir);
}

// A device or a pipe cannot be renamed over: it is written in place and stays what it was.
TEST(AtomicFile, WritesDevicesAndPipesInPlace) {
  namespace fs = std::filesystem;
  write_file_atomically("/dev/null", "discarded\n");
  EXPECT_TRUE(fs::is_character_file(fs::status("/dev/null")));
  const std::string fifo = temp_path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::string received;
  std::thread reader([&] { received = read_all(fifo); });
  write_file_atomically(fifo, "through a pipe\n");
  reader.join();
  EXPECT_EQ(received, "through a pipe\n");
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo)));
  // A link to one (through another link) is written in place too: the pipe gets the text.
  const std::string link = temp_path("link-to-fifo");
  fs::create_symlink(fifo, link + ".inner");
  fs::create_symlink(link + ".inner", link);
  std::thread again([&] { received = read_all(fifo); });
  write_file_atomically(link, "linked pipe\n");
  again.join();
  EXPECT_EQ(received, "linked pipe\n");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  fs::remove(link), fs::remove(link + ".inner"), fs::remove(fifo);
}

// A cycle of links is a runtime failure naming the path, not a write over one of the links.
TEST(AtomicFile, ACycleOfLinksIsRefused) {
  namespace fs = std::filesystem;
  const std::string a = temp_path("cycle-a"), b = temp_path("cycle-b");
  fs::create_symlink(b, a);
  fs::create_symlink(a, b);
  const std::string message = runtime_failure_writing(a);
  EXPECT_NE(message.find(std::strerror(ELOOP)), std::string::npos) << message;
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(a)));
  fs::remove(a), fs::remove(b);
}

}  // namespace
}  // namespace axo
