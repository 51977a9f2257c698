// Writing a file so that a reader sees the old content or the new, never a
// part: the text goes to a temporary file beside it, is flushed and synced,
// then renamed over the path. Every file axo writes (plans, CSV, SVG,
// run.json, checkpoints, model files) goes through it, so training never
// loses a checkpoint to a crash mid-write.
#pragma once

#include <string>

namespace axo {

// InputError when the temporary file cannot be created; runtime_error when
// writing, syncing or renaming fails (the temporary file is removed).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace axo
