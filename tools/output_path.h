// The check on every option naming a file a command writes (or a shard
// prefix): the folder that would hold it must exist and be a folder (for a
// link, the folder of the file at the end of its links, which the writer
// replaces) and take new files (a probe file is made and removed), and a
// file's path must not be a folder, so a typo is a usage error (exit 2)
// before any work, not a failure after it. A write that still fails at the
// end (a full disk, a folder changed meanwhile) is a runtime failure
// (model/atomic_file.h).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace axo::tools {

// For add_option(...)->check(output_path()): CLI11 reports a failure as
// "--out: cannot write a/b/plan.yaml: the folder a/b does not exist", or
// "--csv: cannot write runs: it is a folder".
CLI::Validator output_path();
// InputError "OPTION: cannot write ..." where output_path() would refuse `path`: for the files a
// command derives from its options (a sidecar beside --emit-out).
void check_output_file(const std::string& option, const std::string& path);
// The same for a prefix of files (PREFIX_train_000000.bin): only its folder is checked.
CLI::Validator output_prefix();

// Whether two paths name one file: the same text, the same existing file (a link or a hard
// link to it), or the same path once links, "." and ".." are resolved (the file need not exist).
bool same_file(const std::string& a, const std::string& b);
// The first pair (earlier, later) of `paths` that name one file (same_file), if any: an input given
// twice would count twice, an output written twice would lose one.
std::optional<std::pair<size_t, size_t>> repeated_file(const std::vector<std::string>& paths);
// InputError "OPTION B: given twice (as A before): CONSEQUENCE" where two of `paths` name one file.
void reject_repeated_inputs(const std::string& option, const std::vector<std::string>& paths,
                            const std::string& consequence);
// InputError "A and B both write P: give each its own file" where two outputs (option, path) name one file.
void reject_shared_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);
// InputError "OPTION P: it is WHAT, which this command reads: give the output its own file" where an
// output (option, path) names one of the inputs (what it is, path): the output would replace it.
void reject_outputs_over_inputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                const std::vector<std::pair<std::string, std::string>>& inputs);
// Adds (what, file) for a --model or --machine input `name_or_path` of preset `kind` ("models",
// "machines"): the preset's file for a name; nothing where it names neither (loading it says why).
void add_preset_input(std::vector<std::pair<std::string, std::string>>& inputs, const std::string& what,
                      const std::string& kind, const std::string& name_or_path);

}  // namespace axo::tools
