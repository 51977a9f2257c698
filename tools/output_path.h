// The check on every option naming a file a command writes (or a shard
// prefix): the folder that would hold it must exist and be a folder, so a
// typo is a usage error (exit 2) before any work, not a failure after it.
// A write that still fails at the end (permissions, a full disk) is a
// runtime failure (model/atomic_file.h).
#pragma once

#include <CLI/CLI.hpp>

namespace axo::tools {

// For add_option(...)->check(output_path()): CLI11 reports a failure as
// "--out: cannot write a/b/plan.yaml: the folder a/b does not exist".
CLI::Validator output_path();

}  // namespace axo::tools
