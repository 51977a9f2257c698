// Training checkpoints (see checkpoint.h).
#include "executor/train/checkpoint.h"

#include <boost/crc.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <unistd.h>

#include "model/atomic_file.h"
#include "model/error.h"
#include "model/input_file.h"

namespace axo {

namespace fs = std::filesystem;

namespace {

// The magic's last byte is the format: '2' adds the batch, the sequence length and the loss scaler's
// state after the random state; '3' the run's settings at the end.
constexpr char kMagic[8] = {'A', 'X', 'O', 'C', 'K', 'P', 'T', '3'};
constexpr size_t kVersionAt = sizeof kMagic - 1;

template <class T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void put_floats(std::string& out, const std::vector<float>& values) {
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// Reads from a payload, failing with the file's name when it runs short.
struct Reader {
  const std::string& bytes;
  const std::string& path;
  size_t at = 0;
  void take(void* into, size_t n) {
    if (at + n > bytes.size()) throw InputError(path + ": checkpoint payload is truncated");
    std::memcpy(into, bytes.data() + at, n);
    at += n;
  }
  template <class T>
  T get() {
    T value;
    take(&value, sizeof value);
    return value;
  }
  std::vector<float> floats(size_t n) {
    std::vector<float> values(n);
    take(values.data(), n * sizeof(float));
    return values;
  }
};

uint32_t crc32(const std::string& bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

// The files of `dir` whose names start with step_ and satisfy `wanted`.
std::vector<fs::path> step_files(const std::string& dir, const std::function<bool(const fs::path&)>& wanted) {
  std::vector<fs::path> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().filename().string().rfind("step_", 0) == 0 && wanted(entry.path())) found.push_back(entry.path());
  }
  return found;
}

}  // namespace

bool is_checkpoint_name(const std::string& path) { return fs::path(path).extension() == ".axockpt"; }

std::vector<std::string> checkpoint_files(const std::string& dir) {
  auto found = step_files(dir, [](const fs::path& path) { return is_checkpoint_name(path.string()); });
  std::sort(found.rbegin(), found.rend());
  return {found.begin(), found.end()};
}

void set_aside_damaged(const std::vector<std::string>& paths, std::ostream& log) {
  for (const std::string& path : paths) {
    fs::rename(path, path + ".damaged");
    log << "set aside " << path << " as " << path << ".damaged\n";
  }
}

void check_checkpoint_folder(const std::string& dir, const std::string& option) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw InputError(option + " " + dir + ": cannot create it (" + error.message() + ")");
  const fs::path probe = fs::path(dir) / (".axo_write_probe." + std::to_string(::getpid()));
  std::ofstream(probe) << "probe";  // closed here; its state is read back below
  const bool written = fs::file_size(probe, error) == 5 && !error;
  fs::remove(probe, error);
  if (!written) throw InputError(option + " " + dir + ": cannot write in it");
}

void remove_partial_checkpoints(const std::string& dir, std::ostream& log) {
  const auto partial = step_files(dir, [](const fs::path& path) {
    return path.filename().string().find(".axockpt.tmp.") != std::string::npos;
  });
  for (const fs::path& path : partial) fs::remove(path);
  if (!partial.empty()) log << "removed " << partial.size() << " partly written checkpoint(s) from " << dir << "\n";
}

std::string checkpoint_path(const std::string& dir, int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "step_%08lld.axockpt", (long long)step);
  return (fs::path(dir) / name).string();
}

void write_checkpoint(const std::string& dir, const TrainingState& s, int keep) {
  fs::create_directories(dir);
  std::string payload;
  for (int64_t v : {s.shape.layers, s.shape.heads, s.shape.channels, s.shape.max_seq, s.shape.vocab,
                    s.shape.padded_vocab}) {
    put(payload, v);
  }
  put(payload, s.step);
  put(payload, s.data_position);
  put(payload, uint64_t(s.rng_state.size()));
  payload += s.rng_state;
  put(payload, s.batch);
  put(payload, s.seq);
  put(payload, s.loss_scaler.scale);
  put(payload, s.loss_scaler.clean_steps);
  put(payload, s.loss_scaler.skipped_steps);
  put(payload, uint64_t(s.parameters.size()));
  put_floats(payload, s.parameters);
  put_floats(payload, s.m);
  put_floats(payload, s.v);
  const RunSettings settings = s.settings.value_or(RunSettings{});
  for (double v : {settings.lr, settings.min_lr_fraction, settings.weight_decay, settings.grad_clip}) put(payload, v);
  for (int64_t v : {settings.steps, settings.warmup, settings.lr_schedule, settings.data_tokens}) put(payload, v);
  std::string file(kMagic, sizeof kMagic);
  put(file, uint64_t(payload.size()));
  put(file, crc32(payload));
  file += payload;
  write_file_atomically(checkpoint_path(dir, s.step), file);
  const auto all = checkpoint_files(dir);
  for (size_t i = size_t(std::max(keep, 1)); i < all.size(); ++i) fs::remove(all[i]);
}

TrainingState read_checkpoint(const std::string& path) {
  const std::string file = read_input_file(path, "checkpoint");
  const size_t header = sizeof kMagic + sizeof(uint64_t) + sizeof(uint32_t);
  if (file.size() < header || std::memcmp(file.data(), kMagic, kVersionAt) != 0 ||
      file[kVersionAt] < '1' || file[kVersionAt] > '3') {
    throw InputError(path + ": not an axo checkpoint (bad magic or too short)");
  }
  const bool second_format = file[kVersionAt] >= '2';
  uint64_t length = 0;
  uint32_t checksum = 0;
  std::memcpy(&length, file.data() + sizeof kMagic, sizeof length);
  std::memcpy(&checksum, file.data() + sizeof kMagic + sizeof length, sizeof checksum);
  if (file.size() - header != length) {
    throw InputError(path + ": truncated checkpoint (" + std::to_string(file.size() - header) + " of " +
                     std::to_string(length) + " payload bytes)");
  }
  const std::string payload = file.substr(header);
  if (crc32(payload) != checksum) throw InputError(path + ": checkpoint checksum mismatch (the file is corrupt)");
  Reader r{payload, path};
  TrainingState s;
  s.shape.layers = r.get<int64_t>(), s.shape.heads = r.get<int64_t>(), s.shape.channels = r.get<int64_t>();
  s.shape.max_seq = r.get<int64_t>(), s.shape.vocab = r.get<int64_t>(), s.shape.padded_vocab = r.get<int64_t>();
  s.step = r.get<int64_t>();
  s.data_position = r.get<int64_t>();
  const uint64_t rng_length = r.get<uint64_t>();
  if (rng_length > payload.size()) throw InputError(path + ": bad random-state length");
  s.rng_state.resize(rng_length);
  r.take(s.rng_state.data(), rng_length);
  if (second_format) {
    s.batch = r.get<int64_t>(), s.seq = r.get<int64_t>();
    s.loss_scaler.scale = r.get<double>();
    s.loss_scaler.clean_steps = r.get<int64_t>(), s.loss_scaler.skipped_steps = r.get<int64_t>();
  }
  const uint64_t n = r.get<uint64_t>();
  check_gpt_shape(s.shape, path);
  if (n > payload.size() / sizeof(float) || n != uint64_t(gpt_parameter_count(s.shape))) {
    throw InputError(path + ": parameter count does not match its shape or the file");
  }
  s.parameters = r.floats(n);
  s.m = r.floats(n);
  s.v = r.floats(n);
  if (file[kVersionAt] == '3') {
    RunSettings& settings = s.settings.emplace();
    settings.lr = r.get<double>(), settings.min_lr_fraction = r.get<double>();
    settings.weight_decay = r.get<double>(), settings.grad_clip = r.get<double>();
    settings.steps = r.get<int64_t>(), settings.warmup = r.get<int64_t>();
    settings.lr_schedule = r.get<int64_t>(), settings.data_tokens = r.get<int64_t>();
  }
  return s;
}

std::optional<TrainingState> load_latest_checkpoint(const std::string& dir, std::ostream& log,
                                                    std::vector<std::string>* damaged) {
  for (const std::string& path : checkpoint_files(dir)) {
    try {
      TrainingState state = read_checkpoint(path);
      // Newest is by name: a file renamed or copied to another step's name would shadow the
      // newer checkpoints (and keep them pruned) run after run.
      if (checkpoint_path(dir, state.step) != path) {
        throw InputError(path + ": it holds step " + std::to_string(state.step) + ", not the step of its name");
      }
      return state;
    } catch (const InputError& e) {
      log << "warning: " << e.what() << "; trying the previous checkpoint\n";
      if (damaged) damaged->push_back(path);
    }
  }
  return std::nullopt;
}

}  // namespace axo
