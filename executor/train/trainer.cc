// The training loop (see trainer.h).
#include "executor/train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "executor/cpu/adamw.h"
#include "executor/data/token_shards.h"
#include "executor/gpt/llmc_checkpoint.h"
#include "executor/train/checkpoint.h"
#include "model/breakdown.h"
#include "model/error.h"
#include "model/plan_file.h"

namespace axo {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Trainer::Trainer(const TransformerSpec& spec, TrainOptions options, std::ostream& log)
    : spec_(spec), o_(std::move(options)), log_(log), model_(gpt_shape(spec)), rng_(o_.seed) {
  T_ = o_.seq > 0 ? o_.seq : spec.seq_len;
  if (T_ > spec.seq_len) throw InputError("--seq " + std::to_string(T_) + " exceeds the model's seq_len " + std::to_string(spec.seq_len));
  if (o_.batch < 1 || o_.microbatch < 1 || o_.batch % o_.microbatch != 0) {
    throw InputError("--microbatch " + std::to_string(o_.microbatch) + " does not divide --batch " +
                     std::to_string(o_.batch));
  }
  if (o_.steps < 1) throw InputError("--steps must be at least 1");
  if ((o_.checkpoint_every > 0 || o_.resume) && o_.checkpoint_dir.empty()) {
    throw InputError("--checkpoint-every and --resume need --checkpoint-dir");
  }
  const size_t n = model_.parameters().size();
  m_.assign(n, 0.0f);
  v_.assign(n, 0.0f);
  if (!o_.init_from.empty()) {
    GptShape shape;
    std::vector<float> parameters;
    read_llmc_model(o_.init_from, shape, parameters);
    if (!(shape == model_.shape())) {
      throw InputError(o_.init_from + ": its shape does not match the model " + spec.name);
    }
    model_.parameters() = parameters;
  } else {
    model_.initialize(o_.seed);
  }
}

double Trainer::learning_rate(int64_t s) const {
  if (o_.warmup > 0 && s < o_.warmup) return o_.lr * double(s + 1) / double(o_.warmup);
  const double span = double(std::max<int64_t>(o_.steps - o_.warmup, 1));
  const double progress = std::min(1.0, double(s - o_.warmup) / span);
  const double floor = o_.lr * o_.min_lr_fraction;
  return floor + 0.5 * (o_.lr - floor) * (1.0 + std::cos(M_PI * progress));
}

double Trainer::clip_gradients() {
  std::vector<float>& g = model_.gradients();
  double sum = 0;
  for (float x : g) sum += double(x) * double(x);
  const double norm = std::sqrt(sum);
  if (o_.grad_clip > 0 && norm > o_.grad_clip) {
    const float scale = float(o_.grad_clip / norm);
    for (float& x : g) x *= scale;
  }
  return norm;
}

void Trainer::apply_adamw(int64_t step, double lr) {
  // Weight decay on the matrices (wte, wpe, qkvw, attprojw, fcw, fcprojw), not on norms and biases.
  static constexpr bool kDecayed[kGptTensors] = {true, true, false, false, true, false, true, false,
                                                 false, false, true, false, true, false, false, false};
  const auto sizes = gpt_tensor_sizes(model_.shape());
  size_t offset = 0;
  for (int i = 0; i < kGptTensors; ++i) {
    cpu::AdamWSettings settings;
    settings.learning_rate = float(lr);
    settings.weight_decay = kDecayed[i] ? float(o_.weight_decay) : 0.0f;
    cpu::adamw_update(model_.parameters().data() + offset, model_.gradients().data() + offset, m_.data() + offset,
                      v_.data() + offset, size_t(sizes[size_t(i)]), settings, long(step));
    offset += size_t(sizes[size_t(i)]);
  }
}

double Trainer::validate() {
  TokenStream val(o_.val_data);
  std::vector<int> inputs(size_t(o_.microbatch * T_)), targets(inputs.size());
  double sum = 0;
  for (int64_t i = 0; i < o_.val_batches; ++i) {
    val.next_batch(o_.microbatch, T_, inputs.data(), targets.data());
    sum += model_.forward(inputs.data(), targets.data(), o_.microbatch, T_);
  }
  return sum / double(o_.val_batches);
}

std::vector<StepRecord> Trainer::run() {
  TokenStream data(o_.data);
  if (data.max_token() >= spec_.vocab) {
    throw InputError("--data: token " + std::to_string(data.max_token()) + " is outside the model's vocabulary of " +
                     std::to_string(spec_.vocab));
  }
  int64_t first_step = 0;
  if (o_.resume) {
    if (auto state = load_latest_checkpoint(o_.checkpoint_dir, log_)) {
      if (!(state->shape == model_.shape())) throw InputError(o_.checkpoint_dir + ": the checkpoint is of another model");
      model_.parameters() = state->parameters;
      m_ = state->m, v_ = state->v;
      data.seek(state->data_position);
      std::istringstream(state->rng_state) >> rng_;
      first_step = state->step;
      log_ << "resuming from step " << first_step << " (" << checkpoint_path(o_.checkpoint_dir, first_step) << ")\n";
    } else {
      log_ << "no checkpoint in " << o_.checkpoint_dir << ": starting from step 0\n";
    }
  }
  const int64_t accumulation = o_.batch / o_.microbatch;
  std::vector<int> inputs(size_t(o_.microbatch * T_)), targets(inputs.size());
  std::vector<StepRecord> records;
  const bool terminal = isatty(fileno(stdout)) != 0;
  const auto run_start = Clock::now();
  const int64_t last_step = o_.stop_after > 0 ? std::min(o_.stop_after, o_.steps) : o_.steps;
  for (int64_t s = first_step; s < last_step; ++s) {
    const auto start = Clock::now();
    model_.times() = OpTimes{};
    model_.zero_gradients();
    double loss = 0;
    for (int64_t k = 0; k < accumulation; ++k) {
      data.next_batch(o_.microbatch, T_, inputs.data(), targets.data());
      loss += model_.forward(inputs.data(), targets.data(), o_.microbatch, T_);
      model_.backward();
    }
    loss /= double(accumulation);
    const auto optimizer_start = Clock::now();
    if (accumulation > 1) {
      const float scale = 1.0f / float(accumulation);
      for (float& g : model_.gradients()) g *= scale;
    }
    StepRecord r;
    r.step = s + 1;
    r.loss = loss;
    r.grad_norm = clip_gradients();
    r.lr = learning_rate(s);
    apply_adamw(s + 1, r.lr);
    r.optimizer_s = seconds_since(optimizer_start);
    r.ops = model_.times();
    r.seconds = seconds_since(start);
    r.tokens_per_s = double(o_.batch * T_) / r.seconds;
    r.gflops = model_.flops_per_step(o_.batch, T_) / r.seconds / 1e9;
    if (o_.val_every > 0 && !o_.val_data.empty() && (r.step % o_.val_every == 0 || r.step == o_.steps)) {
      r.val_loss = validate();
    }
    records.push_back(r);
    if (o_.checkpoint_every > 0 && (r.step % o_.checkpoint_every == 0 || r.step == last_step)) {
      std::ostringstream rng;
      rng << rng_;
      write_checkpoint(o_.checkpoint_dir, {model_.shape(), r.step, data.position(), rng.str(), model_.parameters(), m_, v_});
    }
    char line[256];
    std::snprintf(line, sizeof line, "step %5lld/%lld | loss %.4f | lr %.2e | norm %.3f | %.0f tok/s | %.2f GFLOP/s",
                  (long long)r.step, (long long)o_.steps, r.loss, r.lr, r.grad_norm, r.tokens_per_s, r.gflops);
    std::string text = line;
    if (r.val_loss >= 0) text += " | val " + std::to_string(r.val_loss).substr(0, 6);
    if (terminal) {
      const double done = double(r.step - first_step), left = double(o_.steps - r.step);
      const double eta = seconds_since(run_start) / done * left;
      std::printf("\r\033[K%s | ETA %.0f s%s", text.c_str(), eta, r.step == last_step ? "\n" : "");
      std::fflush(stdout);
    } else {
      log_ << text << "\n";
    }
  }
  if (!o_.run_json.empty()) write_run_json(records);
  if (!o_.save_model.empty()) write_llmc_model(o_.save_model, model_.shape(), model_.parameters());
  return records;
}

void Trainer::write_run_json(const std::vector<StepRecord>& records) const {
  nlohmann::ordered_json j;
  j["model"] = spec_.name;
  j["backend"] = "cpu";
  j["ranks"] = 1;
  j["batch"] = o_.batch;
  j["microbatch"] = o_.microbatch;
  j["seq"] = T_;
  j["parameters"] = gpt_parameter_count(model_.shape());
  j["steps"] = nlohmann::ordered_json::array();
  for (const StepRecord& r : records) {
    nlohmann::ordered_json step;
    step["step"] = r.step;
    step["loss"] = r.loss;
    step["lr"] = r.lr;
    step["grad_norm"] = r.grad_norm;
    step["iteration_s"] = r.seconds;
    step["tokens_per_s"] = r.tokens_per_s;
    step["gflops"] = r.gflops;
    if (r.val_loss >= 0) step["val_loss"] = r.val_loss;
    step["ops_s"] = {{"gemm", r.ops.gemm},       {"attention", r.ops.attention}, {"layernorm", r.ops.layernorm},
                     {"gelu", r.ops.gelu},       {"embedding", r.ops.embedding}, {"loss", r.ops.loss},
                     {"residual", r.ops.residual}, {"optimizer", r.optimizer_s}};
    // The planner's components: on one rank everything but the optimizer is compute.
    const double values[] = {r.seconds - r.optimizer_s, 0, 0, 0, 0, 0, r.optimizer_s};
    for (size_t i = 0; i < kComponentNames.size(); ++i) step["components_s"][kComponentNames[i]] = values[i];
    j["steps"].push_back(step);
  }
  write_file_atomically(o_.run_json, j.dump(2) + "\n");
}

}  // namespace axo
