// The output path check of the subcommands (see output_path.h).
#include "tools/output_path.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "model/atomic_file.h"
#include "model/error.h"
#include "model/presets.h"

namespace axo::tools {

namespace {

namespace fs = std::filesystem;

// Empty when a file can be made in `folder` (a probe made and removed, as the atomic writer's
// temporary file will be: permission bits say nothing to root, and some file systems refuse root
// too), else why not. Not for what is written in place (/dev, /proc, pipes): nothing is made there.
std::string unwritable_folder(const fs::path& folder) {
  std::string probe = ((folder.empty() ? fs::path(".") : folder) / ".axo-write-probe-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    return "the folder " + (folder.empty() ? std::string(".") : folder.string()) + " cannot be written in (" +
           std::strerror(errno) + ")";
  }
  close(fd);
  unlink(probe.c_str());
  return {};
}

// Empty when the folder that would hold `path` is there, else what is wrong with it ("the folder
// F does not exist").
std::string folder_problem(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) return {};  // the working directory
  std::error_code error;
  const fs::file_status status = fs::status(folder, error);
  if (fs::is_directory(status)) return {};
  std::string why;
  if (fs::exists(status)) {
    why = "is not a folder";
  } else if (status.type() == fs::file_type::not_found) {
    why = "does not exist";
  } else {
    why = "cannot be reached (" + error.message() + ")";
  }
  return "the folder " + folder.string() + " " + why;
}

// Empty when the folder that would hold `path` is there, else why not (an empty path, from
// `--csv ""`, names no file to write: refused, not taken for "no output").
std::string missing_folder(const std::string& path) {
  if (path.empty()) return "an empty path names no file to write";
  const std::string problem = folder_problem(path);
  return problem.empty() ? "" : "cannot write " + path + ": " + problem;
}

// Empty when `path` can be written as a file, else why not: its folder is
// missing or takes no files, or the path is a folder itself.
std::string unwritable_file(const std::string& path) {
  if (std::string why = missing_folder(path); !why.empty()) return why;
  std::error_code error;
  std::string target;  // the file written (model/atomic_file.h): "" where written in place (/dev/stdout, a pipe)
  try {
    target = written_file(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  if (target != path && !target.empty()) {  // through its links: that file's folder must be there
    if (std::string problem = folder_problem(target); !problem.empty()) {
      return "cannot write " + path + ": it links to " + target + ", and " + problem;
    }
  }
  if (fs::is_directory(fs::status(path, error))) return "cannot write " + path + ": it is a folder";
  if (!target.empty()) {  // its temporary file is made beside it
    if (std::string problem = unwritable_folder(fs::path(target).parent_path()); !problem.empty()) {
      return "cannot write " + path + ": " + problem;
    }
  }
  return {};
}

}  // namespace

CLI::Validator output_path() {
  return CLI::Validator([](std::string& path) { return unwritable_file(path); }, "PATH");
}

void check_output_file(const std::string& option, const std::string& path) {
  if (const std::string why = unwritable_file(path); !why.empty()) throw InputError(option + ": " + why);
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code error;
  if (fs::equivalent(a, b, error)) return true;
  const fs::path resolved_a = fs::weakly_canonical(a, error);
  if (error) return false;
  const fs::path resolved_b = fs::weakly_canonical(b, error);
  return !error && resolved_a == resolved_b;
}

std::optional<std::pair<size_t, size_t>> repeated_file(const std::vector<std::string>& paths) {
  for (size_t i = 0; i < paths.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (same_file(paths[j], paths[i])) return std::pair{j, i};
    }
  }
  return std::nullopt;
}

void reject_repeated_inputs(const std::string& option, const std::vector<std::string>& paths,
                            const std::string& consequence) {
  if (const auto twice = repeated_file(paths)) {
    throw InputError(option + " " + paths[twice->second] + ": given twice (as " + paths[twice->first] +
                     " before): " + consequence);
  }
}

void reject_shared_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::string> paths;
  for (const auto& output : outputs) paths.push_back(output.second);
  if (const auto twice = repeated_file(paths)) {
    throw InputError(outputs[twice->first].first + " and " + outputs[twice->second].first + " both write " +
                     paths[twice->second] + ": give each its own file");
  }
}

void reject_outputs_over_inputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                const std::vector<std::pair<std::string, std::string>>& inputs) {
  for (const auto& [option, output] : outputs) {
    for (const auto& [what, input] : inputs) {
      if (!output.empty() && !input.empty() && same_file(output, input)) {
        throw InputError(option + " " + output + ": it is " + what + ", which this command reads: give the output "
                         "its own file");
      }
    }
  }
}

void add_preset_input(std::vector<std::pair<std::string, std::string>>& inputs, const std::string& what,
                      const std::string& kind, const std::string& name_or_path) {
  if (name_or_path.empty()) return;
  try {
    inputs.emplace_back(what, resolve_preset(kind, name_or_path));
  } catch (const InputError&) {  // loading it says why
  }
}

CLI::Validator output_prefix() {
  return CLI::Validator([](std::string& path) { return missing_folder(path); }, "PREFIX");
}

}  // namespace axo::tools
