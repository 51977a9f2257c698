// The command line's error line (tools/error_line.h): the prefix, the kind
// and the message leave in one write, so ranks sharing a stream under mpirun
// cannot interleave mid-line. stderr is put on a SOCK_SEQPACKET socket, which
// keeps each write a message of its own.
#include "tools/error_line.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <string>

namespace {

// What the first write to stderr during `write_error` carried.
template <typename Write>
std::string first_write_to_stderr(Write write_error) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair) != 0) return "socketpair failed";
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(pair[0], STDERR_FILENO);
  write_error();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  char buffer[4096];
  const ssize_t n = ::recv(pair[1], buffer, sizeof buffer, MSG_DONTWAIT);
  ::close(pair[0]);
  ::close(pair[1]);
  return n > 0 ? std::string(buffer, size_t(n)) : "";
}

TEST(ErrorLine, TheWholeLineLeavesInOneWrite) {
  EXPECT_EQ(first_write_to_stderr([] { axo::tools::print_error_line("error", "--model gpt2-tiny is gpt2-tiny"); }),
            "axo: error: --model gpt2-tiny is gpt2-tiny\n");
  EXPECT_EQ(first_write_to_stderr([] { axo::tools::print_error_line("failed on rank 3", "out of memory"); }),
            "axo: failed on rank 3: out of memory\n");
  // (What main did before, std::cerr << "axo: error: " << message, wrote each piece as it came.)
}

}  // namespace
