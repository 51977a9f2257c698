// The training loop (see trainer.h).
#include "executor/train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "executor/data/token_shards.h"
#include "executor/gpt/llmc_checkpoint.h"
#include "executor/train/checkpoint.h"
#include "executor/train/run_json_writer.h"
#include "model/atomic_file.h"
#include "model/breakdown.h"
#include "model/byte_size.h"
#include "model/error.h"

namespace axo {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t sequence_length(const TransformerSpec& spec, const TrainOptions& o) {
  const int64_t T = o.seq > 0 ? o.seq : spec.seq_len;
  if (T > spec.seq_len) throw InputError("--seq " + std::to_string(T) + " exceeds the model's seq_len " + std::to_string(spec.seq_len));
  return T;
}

ParallelOptions parallel_options(const TrainOptions& o, int64_t T) {
  ParallelOptions p;
  p.schedule = o.schedule;
  p.overlap = o.overlap ? *o.overlap : o.grid.overlap ? Overlap{} : Overlap::none();
  p.recompute = o.grid.recompute;
  p.recompute_layers = o.grid.recompute_layers;
  p.seq = T;
  p.device_memory_bytes = o.device_memory;
  p.optimizer_threads = o.optimizer_threads;
  p.precision = o.precision;
  return p;
}

// A validation loss on shards the model trains on measures nothing held out: --val-data naming a shard
// of --data (the same pattern, or one that matches a training shard) is refused, naming it.
void refuse_training_shards_as_validation(const std::string& data, const std::string& val_data) {
  const std::vector<std::string> training = token_shard_paths(data);
  for (const std::string& val : token_shard_paths(val_data)) {
    for (const std::string& train : training) {
      std::error_code error;
      if (!std::filesystem::equivalent(val, train, error)) continue;
      throw InputError("--val-data '" + val_data + "' matches " + val + ", a training shard of --data '" + data +
                       "': the validation loss would be of text the model trains on");
    }
  }
}

// "pipeline: 2 stages x 2 chunks (1f1b), layers by stage 1+1,1+1"
std::string pipeline_line(const TrainOptions& o, const PipelineSplit& split) {
  return "pipeline: " + std::to_string(o.grid.pipeline) + " stages x " + std::to_string(o.grid.interleave) + " chunks (" +
         to_string(o.schedule.schedule) + "), layers by stage " + split.text() + "\n";
}

}  // namespace

Trainer::Trainer(const TransformerSpec& spec, TrainOptions options, Communicator& world, std::ostream& log)
    : spec_(spec),
      o_(std::move(options)),
      world_(world),
      log_(log),
      T_(sequence_length(spec, o_)),
      grid_(world, o_.grid),
      model_(gpt_shape(spec), grid_, parallel_options(o_, T_)),
      rng_(o_.seed) {
  const int64_t D = o_.grid.data;
  if (o_.batch < 1 || o_.microbatch < 1 || o_.batch % (o_.microbatch * D) != 0) {
    const std::string per_step = D == 1 ? "" : " × data " + std::to_string(D) + " = " + std::to_string(o_.microbatch * D);
    throw InputError("--microbatch " + std::to_string(o_.microbatch) + per_step + " does not divide --batch " +
                     std::to_string(o_.batch));
  }
  if (o_.microbatch % o_.grid.z != 0) {
    throw InputError("z = " + std::to_string(o_.grid.z) + " does not divide --microbatch " +
                     std::to_string(o_.microbatch) + " (Z splits a microbatch's sequences)");
  }
  if (o_.steps < 1) throw InputError("--steps must be at least 1");
  if (o_.stop_after > o_.steps) {  // it would stop nothing: the run ends at --steps with its checkpoint
    throw InputError("--stop-after " + std::to_string(o_.stop_after) + " is after the last step, --steps " +
                     std::to_string(o_.steps) + ": give a step of the run to stop at");
  }
  if ((o_.checkpoint_every > 0 || o_.stop_after > 0 || o_.resume) && o_.checkpoint_dir.empty()) {
    throw InputError("--checkpoint-every, --stop-after and --resume need --checkpoint-dir");
  }
  if (o_.val_every > 0 && o_.val_data.empty()) throw InputError("--val-every needs --val-data");
  if (!o_.val_data.empty() && o_.val_every == 0) {
    throw InputError("--val-data needs --val-every N (steps between validation losses; the last step is one)");
  }
  if (!o_.val_data.empty()) refuse_training_shards_as_validation(o_.data, o_.val_data);
  if (!o_.checkpoint_dir.empty() && !writes_checkpoints() && !o_.resume) {
    throw InputError("--checkpoint-dir " + o_.checkpoint_dir + " with neither --checkpoint-every nor --stop-after "
                     "writes no checkpoint: give --checkpoint-every N");
  }
  if (!o_.checkpoint_dir.empty() && std::filesystem::exists(o_.checkpoint_dir) &&
      !std::filesystem::is_directory(o_.checkpoint_dir)) {
    throw InputError("--checkpoint-dir " + o_.checkpoint_dir + " is a file, not a folder");
  }
  // The leader writes the checkpoints; its refusal stops every rank (train's MPI_Abort).
  if (writes_checkpoints() && leader()) check_checkpoint_folder(o_.checkpoint_dir, "--checkpoint-dir");
  const std::vector<std::string> earlier = checkpoint_files(o_.checkpoint_dir);
  if (!o_.resume && writes_checkpoints() && !earlier.empty()) {
    throw InputError("--checkpoint-dir " + o_.checkpoint_dir + " holds another run's checkpoints (" + earlier.front() +
                     "): give --resume to continue it, or another folder");
  }
  // Every rank builds the same full model and keeps its shards.
  Gpt full(gpt_shape(spec));
  if (!o_.init_from.empty()) {
    GptShape shape;
    std::vector<float> parameters;
    read_llmc_model(o_.init_from, shape, parameters);
    if (!(shape == full.shape())) {
      throw InputError(o_.init_from + ": a model of " + to_string(shape) + ", where " + spec.name + " has " +
                       to_string(full.shape()));
    }
    full.parameters() = std::move(parameters);
  } else {
    full.initialize(o_.seed);
  }
  model_.load(full.parameters());
}

bool Trainer::step_is_clean(int64_t step, std::ostream& log) {
  if (world_.rank() == o_.overflow_rank && step == o_.overflow_step) model_.inject_gradient_overflow();  // test hook
  if (!o_.loss_scaling) return true;
  const double scale = scaler_.scale();
  if (scaler_.update(model_.unscale_gradients(scale))) return true;
  log << "step " << step << ": inf or NaN gradients: skipped on every rank; loss scale " << scale << " -> "
      << scaler_.scale() << "\n";
  return false;
}

// Inf or NaN gradients without loss scaling to skip them: an update would make every weight NaN,
// and the next checkpoint would replace the last good one with them. Every rank has the same
// global norm, so every rank stops here, before the update.
void Trainer::stop_before_a_non_finite_update(const StepRecord& r) const {
  char text[320];
  std::snprintf(text, sizeof text, "step %lld: the gradients' norm is %g (loss %g): training stops before the "
                "update, so the weights and the checkpoints written so far stay as they were; lower --lr, "
                "or train with --loss-scale dynamic, which skips such steps",
                (long long)r.step, r.grad_norm, r.loss);
  throw std::runtime_error(text);
}

double Trainer::learning_rate(int64_t s) const {
  return axo::learning_rate({o_.lr_schedule, o_.lr, o_.min_lr_fraction, o_.warmup, o_.steps}, s);
}

// The mean loss over the validation data's first batches of --batch sequences (whole_validation_batches),
// the same tokens on any grid and microbatch: each data-parallel replica evaluates its share of each batch.
double Trainer::validate() {
  const int64_t replica_batch = this->replica_batch();
  TokenStream val(o_.val_data, grid_.coords().data, int(o_.grid.data));
  std::vector<int> inputs(size_t(replica_batch * T_)), targets(inputs.size());
  double sum = 0;
  for (int64_t i = 0; i < val_batches_; ++i) {
    val.next_batch(replica_batch, T_, inputs.data(), targets.data());
    sum += model_.evaluate(inputs.data(), targets.data(), replica_batch, T_, o_.microbatch);
  }
  return sum / double(val_batches_);
}

// The validation batches `val` (every validation shard) holds whole, at most val_batches: read
// without wrapping, they are the same tokens on any grid. Checked before training.
int64_t Trainer::whole_validation_batches(const TokenStream& val) const {
  const int64_t whole = (val.tokens() - 1) / (o_.batch * T_);
  if (whole < 1) {
    throw InputError("--val-data '" + o_.val_data + "' holds " + std::to_string(val.tokens()) +
                     " tokens, fewer than one validation batch of --batch " + std::to_string(o_.batch) + " × " +
                     std::to_string(T_) + " + 1");
  }
  return std::min(o_.val_batches, whole);
}

bool Trainer::writes_checkpoints() const { return o_.checkpoint_every > 0 || o_.stop_after > 0; }

int64_t Trainer::last_step() const { return o_.stop_after > 0 ? o_.stop_after : o_.steps; }

// A fault must be able to fire: one on a rank the launch lacks, or after the last step this
// invocation runs (--steps, --stop-after), would pass a test that injected nothing. One before the
// checkpoint a run resumes fired in the run that wrote it (the same command, run again).
void Trainer::check_faults_fire() const {
  const auto check = [&](const char* kind, int rank, int64_t step) {
    if (rank < 0) return;
    if (rank >= world_.size() || step > last_step()) {
      throw InputError(std::string("--inject-fault ") + kind + ":" + std::to_string(rank) + ":" + std::to_string(step) +
                       " cannot fire: this run has ranks 0.." + std::to_string(world_.size() - 1) +
                       " and runs to step " + std::to_string(last_step()));
    }
  };
  check("kill", o_.kill_rank, o_.kill_step);
  check("overflow", o_.overflow_rank, o_.overflow_step);
}

int64_t Trainer::replica_batch() const { return o_.batch / o_.grid.data; }

// The newest good checkpoint, the same on every rank (each reads the folder; one that sees another
// step or none, off a filesystem the others share, stops the launch), or nothing where the folder
// has none. The agreement is also the point past which no rank reads: then the damaged ones move.
std::optional<TrainingState> Trainer::load_agreed_checkpoint(std::ostream& log) {
  std::vector<std::string> damaged;
  std::optional<TrainingState> state = load_latest_checkpoint(o_.checkpoint_dir, log, &damaged);
  if (!state && !damaged.empty()) {
    throw InputError("--resume: every checkpoint in " + o_.checkpoint_dir + " is damaged (newest " + damaged.front() + ")");
  }
  const float mine = state ? float(state->step + 1) : 0.0f;  // steps below 2^24 are exact
  float sum = mine;
  world_.all_reduce(&sum, 1);
  if (sum != mine * float(world_.size())) {
    throw InputError("--resume: the ranks found different checkpoints in " + o_.checkpoint_dir + " (rank " +
                     std::to_string(world_.rank()) + ": " + (state ? "step " + std::to_string(state->step) : "none") +
                     "); every rank must read the same folder");
  }
  if (leader()) set_aside_damaged(damaged, log);
  return state;
}

RunSettings Trainer::run_settings(const TokenStream& data) const {
  return {o_.lr, o_.min_lr_fraction, o_.weight_decay, o_.grad_clip, o_.steps, o_.warmup, int64_t(o_.lr_schedule),
          data.tokens()};
}

namespace {

// Empty, or the first option that differs from the checkpointed run's, with both values (compared
// as numbers; the schedule by its value).
std::string changed_setting(const RunSettings& then, const RunSettings& now, const std::string& path) {
  auto text = [](double v) {  // the fewest digits that read back as v
    std::string shortest;
    for (int digits = 6; digits <= 17; ++digits) {
      std::ostringstream out;
      out << std::setprecision(digits) << v;
      shortest = out.str();
      if (std::stod(shortest) == v) break;
    }
    return shortest;
  };
  auto schedule = [](double v) { return std::string(to_string(LrSchedule(int64_t(v)))); };
  // A constant rate does not follow --steps: such a run may be lengthened.
  const bool constant = now.lr_schedule == int64_t(LrSchedule::constant) && then.lr_schedule == now.lr_schedule;
  struct Option {
    const char* name;
    double given, kept;
  };
  const std::vector<Option> options = {
      {"--lr", now.lr, then.lr},
      {"--lr-schedule", double(now.lr_schedule), double(then.lr_schedule)},
      {"--warmup", double(now.warmup), double(then.warmup)},
      {"--steps", double(now.steps), constant ? double(now.steps) : double(then.steps)},
      {"--weight-decay", now.weight_decay, then.weight_decay},
      {"--grad-clip", now.grad_clip, then.grad_clip}};
  for (const Option& o : options) {
    if (o.given == o.kept) continue;
    const bool named = std::string(o.name) == "--lr-schedule";
    const std::string given = named ? schedule(o.given) : text(o.given), kept = named ? schedule(o.kept) : text(o.kept);
    return std::string(o.name) + " " + given + ": " + path + " was trained with " + o.name + " " + kept +
           "; a resumed run keeps the options that shape its steps";
  }
  if (now.data_tokens != then.data_tokens) {
    return "--data holds " + std::to_string(now.data_tokens) + " tokens, where " + path + "'s run read " +
           std::to_string(then.data_tokens) + ": a resumed run reads the same data";
  }
  return "";
}

}  // namespace

// A checkpoint this run can continue from: its model, batch and sequence, the options that shape
// its steps, and steps left to run.
void Trainer::check_resumable(const TrainingState& state, const std::string& path, const TokenStream& data) const {
  if (!(state.shape == model_.layout().shape())) throw InputError(path + ": the checkpoint is of another model");
  if (state.batch > 0 && (state.batch != o_.batch || state.seq != T_)) {
    throw InputError("--batch " + std::to_string(o_.batch) + " --seq " + std::to_string(T_) + ": " + path +
                     " was trained with --batch " + std::to_string(state.batch) + " --seq " +
                     std::to_string(state.seq) + " (its data position counts those)");
  }
  if (state.settings) {
    if (const std::string why = changed_setting(*state.settings, run_settings(data), path); !why.empty()) {
      throw InputError(why);
    }
  }
  if (state.step >= last_step()) {
    const std::string option = last_step() < o_.steps ? "--stop-after " : "--steps ";
    throw InputError(option + std::to_string(last_step()) + ": " + path + " is already at step " +
                     std::to_string(state.step));
  }
}

// The step to start from (--resume): the agreed checkpoint's, its state loaded, or 0 where the
// folder has none.
int64_t Trainer::resume(TokenStream& data, std::ostream& log) {
  const std::optional<TrainingState> state = load_agreed_checkpoint(log);
  // What a killed writer of this run left, whether or not it finished a checkpoint before.
  if (leader()) remove_partial_checkpoints(o_.checkpoint_dir, log);
  if (!state) {
    log << "no checkpoint in " << o_.checkpoint_dir << ": starting from step 0\n";
    return 0;
  }
  const std::string path = checkpoint_path(o_.checkpoint_dir, state->step);
  check_resumable(*state, path, data);
  model_.load(state->parameters);
  model_.load_moments(state->m, state->v);
  // Sequences read, over all replicas: this grid's windows of batch / data each (AXOCKPT1 kept the windows).
  data.seek(state->batch > 0 ? state->data_position / replica_batch() : state->data_position);
  std::istringstream(state->rng_state) >> rng_;
  scaler_.restore(state->loss_scaler);
  log << "resuming from step " << state->step << " (" << path << ")\n";
  if (!o_.init_from.empty()) log << "note: --init-from " << o_.init_from << " is not used: the checkpoint's weights are\n";
  return state->step;
}

void Trainer::save_checkpoint(int64_t step, const TokenStream& data) {
  std::ostringstream rng;
  rng << rng_;
  const int64_t sequences_read = data.position() * replica_batch();
  TrainingState state{model_.layout().shape(), step, sequences_read, o_.batch, T_, rng.str(), scaler_.state(),
                      model_.gathered_master_weights(), model_.gathered_first_moment(),
                      model_.gathered_second_moment(), run_settings(data)};
  if (leader()) write_checkpoint(o_.checkpoint_dir, state);
}

std::vector<StepRecord> Trainer::run() {
  const int64_t replica_batch = this->replica_batch();
  TokenStream data(o_.data, grid_.coords().data, int(o_.grid.data));
  auto check_tokens = [&](const TokenStream& stream, const char* option) {
    const std::string outside = stream.token_outside(int(spec_.vocab));
    if (!outside.empty()) {
      throw InputError(std::string(option) + ": " + outside + " is outside the model's vocabulary of " +
                       std::to_string(spec_.vocab));
    }
  };
  check_tokens(data, "--data");
  if (o_.val_every > 0) {
    const TokenStream val(o_.val_data);  // read once for both checks
    check_tokens(val, "--val-data");
    val_batches_ = whole_validation_batches(val);
  }
  std::ostringstream quiet;
  std::ostream& log = leader() ? log_ : quiet;
  const int64_t first_step = o_.resume ? resume(data, log) : 0;
  check_faults_fire();
  if (o_.grid.pipeline > 1) log << pipeline_line(o_, model_.split());
  log << "precision: " << to_string(o_.precision);
  if (o_.planned_precision) log << " (asked for in " << to_string(*o_.planned_precision) << ", which the executor trains in " << to_string(o_.precision) << ")";
  log << "\n";
  data.check_holds_batch(replica_batch, T_);  // before its buffers: a --batch beyond memory fails here
  std::vector<int> inputs(size_t(replica_batch * T_)), targets(inputs.size());
  std::vector<StepRecord> records;
  // One rank at a terminal redraws its line; mpirun gives its ranks a pseudo-terminal, so several ranks log lines.
  const bool terminal = world_.size() == 1 && isatty(fileno(stdout)) != 0;
  const auto run_start = Clock::now();
  const int64_t last_step = this->last_step();
  const double flops = gpt_training_flops(model_.layout().shape(), o_.batch, T_);
  for (int64_t s = first_step; s < last_step; ++s) {
    const auto start = Clock::now();
    model_.times() = PhaseTimes{};
    data.next_batch(replica_batch, T_, inputs.data(), targets.data());
    StepRecord r;
    r.step = s + 1;
    r.loss = model_.forward_backward(inputs.data(), targets.data(), replica_batch, T_, o_.microbatch,
                                     o_.loss_scaling ? scaler_.scale() : 1.0);
    if (world_.rank() == o_.kill_rank && r.step == o_.kill_step) std::raise(SIGKILL);  // fault test
    r.lr = learning_rate(s);
    if (step_is_clean(r.step, log)) {
      r.grad_norm = model_.clip_gradients(o_.grad_clip);
      if (!std::isfinite(r.grad_norm)) stop_before_a_non_finite_update(r);
      model_.adamw(long(s + 1), r.lr, o_.weight_decay);
    }
    r.times = model_.times();
    r.seconds = seconds_since(start);
    r.tokens_per_s = double(o_.batch * T_) / r.seconds;
    r.gflops = flops / r.seconds / 1e9;
    gather_rank_breakdowns(r);
    if (o_.val_every > 0 && (r.step % o_.val_every == 0 || r.step == o_.steps)) {
      r.val_loss = validate();
    }
    records.push_back(r);
    // Every --checkpoint-every steps, and at the last step this run takes (the one --stop-after resumes from).
    const bool on_schedule = o_.checkpoint_every > 0 && r.step % o_.checkpoint_every == 0;
    if (on_schedule || (r.step == last_step && writes_checkpoints())) save_checkpoint(r.step, data);
    const std::string text = step_line(r);
    if (terminal) {
      const double done = double(r.step - first_step), left = double(o_.steps - r.step);
      const double eta = seconds_since(run_start) / done * left;
      std::printf("\r\033[K%s | ETA %.0f s%s", text.c_str(), eta, r.step == last_step ? "\n" : "");
      std::fflush(stdout);
    } else {
      log << text << "\n";
    }
  }
  const std::vector<RankMemory> memory = gather_memory();
  if (leader()) log_memory(memory, log);
  if (!o_.run_json.empty() && leader()) write_run_json(records, memory);
  if (!o_.save_model.empty()) {
    const std::vector<float> full = model_.gathered_master_weights();
    if (leader()) write_llmc_model(o_.save_model, model_.layout().shape(), full);
  }
  return records;
}

// Every rank's breakdown of step `r` (run.json's steps[].ranks), on world rank 0.
void Trainer::gather_rank_breakdowns(StepRecord& r) const {
  const auto components = r.times.components();
  std::array<float, 11> mine{};
  for (size_t i = 0; i < components.size(); ++i) mine[i] = float(components[i]);
  mine[7] = float(r.times.tp.all_gather), mine[8] = float(r.times.tp.all_reduce);
  mine[9] = float(r.times.tp.reduce_scatter), mine[10] = float(r.seconds);
  std::vector<float> all(mine.size() * size_t(world_.size()));
  world_.all_gather(mine.data(), all.data(), mine.size());
  if (!leader()) return;
  for (int k = 0; k < world_.size(); ++k) {
    std::array<double, 11> row{};
    for (size_t i = 0; i < row.size(); ++i) row[i] = all[mine.size() * size_t(k) + i];
    r.ranks.push_back(row);
  }
}

// "step    12/100 | loss 4.123456 | lr 3.00e-04 | norm 0.812 | 5120 tok/s | 1.23 GFLOP/s | val 4.2"
std::string Trainer::step_line(const StepRecord& r) const {
  char line[256];
  std::snprintf(line, sizeof line, "step %5lld/%lld | loss %.6f | lr %.2e | norm %.3f | %.0f tok/s | %.2f GFLOP/s",
                (long long)r.step, (long long)o_.steps, r.loss, r.lr, r.grad_norm, r.tokens_per_s, r.gflops);
  std::string text = line;
  if (r.val_loss >= 0) text += " | val " + std::to_string(r.val_loss);  // 6 decimals, as the loss
  return text;
}

std::vector<RankMemory> Trainer::gather_memory() const {
  // Byte counts travel as two floats each, exact: the bits above 2^24 and those below.
  const DeviceMemory& device = model_.device_memory();
  std::vector<int64_t> mine = {device.peak(), model_.host_memory().peak()};
  mine.insert(mine.end(), device.peak_by_use().begin(), device.peak_by_use().end());
  std::vector<float> split;
  for (int64_t bytes : mine) split.push_back(float(bytes >> 24)), split.push_back(float(bytes & 0xFFFFFF));
  std::vector<float> all(split.size() * size_t(world_.size()));
  world_.all_gather(split.data(), all.data(), split.size());
  std::vector<RankMemory> ranks(size_t(world_.size()));
  for (size_t k = 0; k < ranks.size(); ++k) {
    auto bytes = [&](size_t i) {
      const float* at = all.data() + k * split.size() + 2 * i;
      return (int64_t(at[0]) << 24) + int64_t(at[1]);
    };
    ranks[k].device_peak = bytes(0), ranks[k].host = bytes(1);
    for (int i = 0; i < kDeviceUses; ++i) ranks[k].device_peak_by_use[size_t(i)] = bytes(size_t(2 + i));
  }
  return ranks;
}

void Trainer::log_memory(const std::vector<RankMemory>& memory, std::ostream& log) const {
  size_t most = 0;
  for (size_t k = 0; k < memory.size(); ++k) {
    if (memory[k].device_peak > memory[most].device_peak) most = k;
  }
  const RankMemory& m = memory[most];
  log << "device memory: peak " << format_bytes(double(m.device_peak)) << " on rank " << most << " ("
      << bytes_by_use_text(m.device_peak_by_use) << ")";
  if (model_.offload()) log << "; offloaded to host: " << format_bytes(double(m.host));
  log << "\n";
}

void Trainer::write_run_json(const std::vector<StepRecord>& records, const std::vector<RankMemory>& memory) const {
  RunDescription run;
  run.model = spec_.name, run.ranks = world_.size(), run.grid = o_.grid, run.schedule = o_.schedule.schedule;
  run.split = model_.split();
  run.node_ranks = o_.node_ranks, run.node_cores = o_.node_cores;
  run.batch = o_.batch, run.microbatch = o_.microbatch, run.seq = T_;
  run.parameters = gpt_parameter_count(model_.layout().shape());
  run.offload = model_.offload(), run.device_limit_bytes = o_.device_memory;
  run.precision = o_.precision, run.planned_precision = o_.planned_precision;
  run.overlap = overlap_text(parallel_options(o_, T_).overlap);
  write_file_atomically(o_.run_json, run_json_text(run, memory, records));
}

}  // namespace axo
