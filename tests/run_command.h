// Running a shell command from a test and collecting what it printed and its
// exit status (the CLI tests run the axo binary, or mpirun, this way).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace axo::testing {

struct CommandResult {
  int code = -1;       // exit status; -1 when killed by a signal
  std::string output;  // what the command wrote to stdout (and stderr when redirected there)
};

inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// `axo ARGUMENTS` with stderr merged into the output (or redirected as given).
inline CommandResult run_axo(const std::string& arguments, const std::string& redirect = "2>&1") {
  return run_command(std::string(AXO_BINARY) + " " + arguments + " " + redirect);
}

}  // namespace axo::testing
