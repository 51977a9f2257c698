// How the command line reports a failure on stderr: "axo: KIND: MESSAGE".
#pragma once

#include <string>

namespace axo::tools {

// Writes "axo: KIND: MESSAGE" and a newline to stderr in one write(2): under
// mpirun every rank may report the same error, and lines written in pieces
// (std::cerr writes each << at once) interleave into "axo: error: axo: error: ...".
void print_error_line(const std::string& kind, const std::string& message);

}  // namespace axo::tools
