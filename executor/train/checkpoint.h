// Training checkpoints: everything a run needs to continue exactly where it
// stopped (parameters, AdamW moments, step, data position, random state).
//
// One file per checkpoint, dir/step_NNNNNNNN.axockpt: the magic "AXOCKPT3"
// ("AXOCKPT2", without the run's settings at the end, and "AXOCKPT1", without
// the batch, sequence length and loss scaler's state either, still read), the payload's
// length (uint64) and CRC-32 (uint32, Boost.CRC), then the payload. Written
// atomically; the newest two are kept, so a checkpoint damaged on disk is
// detected by its length or checksum and the one before it is used (a resumed
// run sets the damaged ones aside as NAME.damaged, out of the count).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "executor/gpt/gpt.h"
#include "executor/train/loss_scaler.h"

namespace axo {

// The options that shape every step of a run: the learning-rate schedule, the optimizer's
// settings and the data. A resumed run must give the same, or it departs from the run it
// continues (AXOCKPT3 on; the lr_schedule is LrSchedule's value).
struct RunSettings {
  double lr = 0, min_lr_fraction = 0, weight_decay = 0, grad_clip = 0;
  int64_t steps = 0, warmup = 0, lr_schedule = 0, data_tokens = 0;
  bool operator==(const RunSettings&) const = default;
};

struct TrainingState {
  GptShape shape;
  int64_t step = 0;           // optimizer steps completed
  int64_t data_position = 0;  // sequences read over all replicas (AXOCKPT1: TokenStream::position())
  int64_t batch = 0, seq = 0;  // the sequences per step and their length the data position counts (0: not kept)
  std::string rng_state;      // the trainer's generator, serialised
  LossScalerState loss_scaler;  // fp16's dynamic loss scale (loss_scaler.h)
  std::vector<float> parameters, m, v;
  std::optional<RunSettings> settings;  // none in files before AXOCKPT3
};

std::string checkpoint_path(const std::string& dir, int64_t step);
// Writes dir/step_NNNNNNNN.axockpt and removes all but the newest `keep`.
void write_checkpoint(const std::string& dir, const TrainingState& state, int keep = 2);
// InputError naming the file and what is wrong (short, bad magic, checksum).
TrainingState read_checkpoint(const std::string& path);
// The newest checkpoint of `dir` that reads back whole; each damaged one is
// reported on `log`, skipped and added to `damaged`. Nothing when none reads.
std::optional<TrainingState> load_latest_checkpoint(const std::string& dir, std::ostream& log,
                                                    std::vector<std::string>* damaged = nullptr);
// Whether `path` is named as checkpoints are (step_N.axockpt: its extension), in any folder.
bool is_checkpoint_name(const std::string& path);
// The checkpoints of `dir`, newest first (none when the folder does not exist).
std::vector<std::string> checkpoint_files(const std::string& dir);
// Renames each of `paths` to PATH.damaged: kept for a look, out of the newest two.
void set_aside_damaged(const std::vector<std::string>& paths, std::ostream& log);
// Removes what writers killed mid-write left in `dir` (step_N.axockpt.tmp.PID).
void remove_partial_checkpoints(const std::string& dir, std::ostream& log);
// Creates `dir` and writes a file in it (removed again), so that a folder that cannot hold
// checkpoints (under a file, read-only) is an InputError before the first step, not at the first
// checkpoint; `option` names it in messages.
void check_checkpoint_folder(const std::string& dir, const std::string& option);

}  // namespace axo
