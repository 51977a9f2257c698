// Checkpoint files: every field back as written, the loss scaler's state
// with it, the format before it (AXOCKPT1) still read, and the folder's
// housekeeping (newest first, damaged set aside, partial writes removed).
#include "executor/train/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/crc.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/error.h"

namespace axo {
namespace {

namespace fs = std::filesystem;

class Checkpoints : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir() const { return dir_.string(); }
  static TrainingState state(int64_t step) {
    TrainingState s;
    s.shape = {.layers = 1, .heads = 1, .channels = 4, .max_seq = 8, .vocab = 16, .padded_vocab = 128};
    s.step = step, s.data_position = 3 * step, s.batch = 4, s.seq = 8, s.rng_state = "rng " + std::to_string(step);
    s.loss_scaler = {32768.0, 7, 2};
    const size_t n = size_t(gpt_parameter_count(s.shape));
    s.parameters.assign(n, 0.5f), s.m.assign(n, 0.25f), s.v.assign(n, 0.125f);
    s.settings = RunSettings{3e-4, 0.1, 0.1, 1.0, 100, 10, 1, 12345};
    return s;
  }
  static std::string bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path dir_ = fs::temp_directory_path() / ("axo_checkpoints_" + std::to_string(::getpid()));
};

TEST_F(Checkpoints, EveryFieldReadsBackAsWritten) {
  const TrainingState written = state(12);
  write_checkpoint(dir(), written);
  const TrainingState read = read_checkpoint(checkpoint_path(dir(), 12));
  EXPECT_TRUE(read.shape == written.shape);
  EXPECT_EQ(read.step, 12);
  EXPECT_EQ(read.data_position, 36);
  EXPECT_EQ(read.batch, 4);
  EXPECT_EQ(read.seq, 8);
  EXPECT_EQ(read.rng_state, "rng 12");
  EXPECT_EQ(read.loss_scaler.scale, 32768.0);
  EXPECT_EQ(read.loss_scaler.clean_steps, 7);
  EXPECT_EQ(read.loss_scaler.skipped_steps, 2);
  EXPECT_EQ(read.parameters, written.parameters);
  EXPECT_EQ(read.m, written.m);
  EXPECT_EQ(read.v, written.v);
  ASSERT_TRUE(read.settings);
  EXPECT_TRUE(*read.settings == *written.settings);
}

// The payload of a checkpoint file (after its 8-byte magic, length and CRC-32).
std::string payload_of(const std::string& file) { return file.substr(8 + 8 + 4); }

// Writes `payload` to `path` as a checkpoint of the format `magic` names, its length and CRC-32 set.
void write_as(const std::string& path, const char* magic, const std::string& payload) {
  boost::crc_32_type crc;
  crc.process_bytes(payload.data(), payload.size());
  const uint64_t length = payload.size();
  const uint32_t checksum = crc.checksum();
  std::ofstream(path, std::ios::binary) << std::string(magic) + std::string(reinterpret_cast<const char*>(&length), 8) +
                                               std::string(reinterpret_cast<const char*>(&checksum), 4) + payload;
}

// A file of the second format (AXOCKPT2): the same payload without the run's settings at its end.
TEST_F(Checkpoints, TheSecondFormatStillReadsWithoutSettings) {
  write_checkpoint(dir(), state(5));
  std::string payload = payload_of(bytes(checkpoint_path(dir(), 5)));
  payload.resize(payload.size() - 8 * 8);
  write_as(checkpoint_path(dir(), 5), "AXOCKPT2", payload);
  const TrainingState read = read_checkpoint(checkpoint_path(dir(), 5));
  EXPECT_EQ(read.batch, 4);
  EXPECT_EQ(read.v, state(5).v);
  EXPECT_FALSE(read.settings);  // nothing to compare a resumed run's options with
}

// A file of the first format: the same payload without the batch, sequence and scaler's 40 bytes,
// magic AXOCKPT1.
TEST_F(Checkpoints, TheFirstFormatStillReadsWithoutALossScale) {
  write_checkpoint(dir(), state(3));
  std::string payload = payload_of(bytes(checkpoint_path(dir(), 3)));
  const size_t rng_end = 6 * 8 + 8 + 8 + 8 + std::string("rng 3").size();
  payload.erase(rng_end, 40);
  write_as(checkpoint_path(dir(), 3), "AXOCKPT1", payload);
  const TrainingState read = read_checkpoint(checkpoint_path(dir(), 3));
  EXPECT_EQ(read.step, 3);
  EXPECT_EQ(read.loss_scaler.scale, 0);  // none kept: the scaler goes on as it is
  EXPECT_EQ(read.batch, 0);
  EXPECT_EQ(read.parameters, state(3).parameters);
}

TEST_F(Checkpoints, TheFolderKeepsTheNewestTwoAndItsHousekeeping) {
  for (int64_t step : {2, 4, 6}) write_checkpoint(dir(), state(step));
  EXPECT_EQ(checkpoint_files(dir()),
            (std::vector<std::string>{checkpoint_path(dir(), 6), checkpoint_path(dir(), 4)}));
  std::ostringstream log;
  set_aside_damaged({checkpoint_path(dir(), 6)}, log);
  EXPECT_EQ(checkpoint_files(dir()), std::vector<std::string>{checkpoint_path(dir(), 4)});
  EXPECT_TRUE(fs::exists(checkpoint_path(dir(), 6) + ".damaged"));
  std::ofstream(checkpoint_path(dir(), 8) + ".tmp.12345") << "half a checkpoint";
  remove_partial_checkpoints(dir(), log);
  EXPECT_FALSE(fs::exists(checkpoint_path(dir(), 8) + ".tmp.12345"));
  EXPECT_NE(log.str().find("removed 1 partly written"), std::string::npos) << log.str();
  EXPECT_TRUE(checkpoint_files(dir() + "/absent").empty());
  // What counts as one: the name checkpoint_path gives, not what a partial write or a set-aside leaves.
  EXPECT_TRUE(is_checkpoint_name(checkpoint_path(dir(), 8)));
  EXPECT_FALSE(is_checkpoint_name(checkpoint_path(dir(), 8) + ".tmp.12345"));
  EXPECT_FALSE(is_checkpoint_name(checkpoint_path(dir(), 6) + ".damaged"));
}

// A folder under a file cannot hold checkpoints: found before training, not at the first
// checkpoint; a good folder is made and left without the probe.
TEST_F(Checkpoints, AFolderThatCannotHoldThemIsFoundBeforeTraining) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  const std::string under_a_file = (dir_ / "file" / "sub").string();
  try {
    check_checkpoint_folder(under_a_file, "--checkpoint-dir");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--checkpoint-dir " + under_a_file + ": cannot create it ("), std::string::npos)
        << e.what();
  }
  const std::string good = (dir_ / "new" / "ckpt").string();
  check_checkpoint_folder(good, "--checkpoint-dir");
  EXPECT_TRUE(fs::is_directory(good));
  EXPECT_TRUE(fs::is_empty(good));
}

// A checkpoint copied to another step's name is damaged: as the newest by name it would shadow
// the newer good one run after run (and keep it pruned).
TEST_F(Checkpoints, AFileWhoseNameSaysAnotherStepIsDamaged) {
  for (int64_t step : {6, 8}) write_checkpoint(dir(), state(step));
  fs::copy_file(checkpoint_path(dir(), 6), checkpoint_path(dir(), 99));
  std::ostringstream log;
  std::vector<std::string> damaged;
  const std::optional<TrainingState> loaded = load_latest_checkpoint(dir(), log, &damaged);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 8);
  EXPECT_EQ(damaged, std::vector<std::string>{checkpoint_path(dir(), 99)});
  EXPECT_NE(log.str().find(checkpoint_path(dir(), 99) + ": it holds step 6, not the step of its name"), std::string::npos)
      << log.str();
}

}  // namespace
}  // namespace axo