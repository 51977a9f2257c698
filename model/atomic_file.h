// Writing a file so that a reader sees the old content or the new, never a
// part: the text goes to a temporary file beside it, is flushed and synced,
// then renamed over the path, and the folder is synced so that the new name
// survives a crash (before a caller prunes an older file). Every file axo writes (plans, CSV, SVG,
// run.json, checkpoints, model files) goes through it, so training never
// loses a checkpoint to a crash mid-write.
#pragma once

#include <string>

namespace axo {

// std::runtime_error naming the path and the OS's reason (strerror) when the
// temporary file cannot be created, or writing, syncing or renaming fails (the
// temporary file is then removed): a runtime failure, exit 1. The command line
// checks an output path's folder before any work (tools/output_path.h), so a
// write that fails here is one the up-front check could not foresee.
// A symbolic link is followed (its target is replaced, the link kept); a
// device, FIFO or socket (/dev/stdout, a pipe) is written in place.
void write_file_atomically(const std::string& path, const std::string& text);

// The file write_file_atomically(path, ...) replaces: `path`, or the end of its chain of links;
// empty for a device, FIFO, socket or /dev, /proc path (written in place). std::runtime_error for
// a loop of links, or a link that cannot be read.
std::string written_file(const std::string& path);

}  // namespace axo
