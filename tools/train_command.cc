// `axo train`: train a GPT on one CPU rank (the serial executor).
#include <iostream>

#include "executor/train/trainer.h"
#include "model/error.h"
#include "model/plan_file.h"
#include "model/presets.h"
#include "tools/commands.h"

namespace axo::tools {

namespace {

struct TrainArguments {
  TrainOptions options;
  std::string model, plan;
};

void run(TrainArguments& a) {
  TransformerSpec spec;
  if (!a.plan.empty()) {
    const Plan plan = read_plan_file(a.plan);
    if (plan.gpus != 1) {
      throw InputError(a.plan + ": a plan for " + std::to_string(plan.gpus) +
                       " GPUs; this executor trains on one rank (parallel execution is not built yet)");
    }
    spec = plan.model;
    if (a.options.microbatch == 0) a.options.microbatch = plan.config.microbatch;
    if (!a.model.empty()) throw InputError("--model and --plan both name a model: give one");
  } else if (!a.model.empty()) {
    spec = load_model(a.model);
  } else {
    throw InputError("--model or --plan is required");
  }
  // Defaults from the model: its global batch, without accumulation.
  if (a.options.batch == 0) a.options.batch = spec.global_batch;
  if (a.options.microbatch == 0) a.options.microbatch = a.options.batch;
  Trainer trainer(spec, a.options, std::cout);
  trainer.run();
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto a = std::make_shared<TrainArguments>();
  TrainOptions& o = a->options;
  CLI::App* cmd = app.add_subcommand("train", "Train a GPT on this machine (one CPU rank)");
  cmd->add_option("--model", a->model, "Model preset or spec file (GPT-2 architecture)");
  cmd->add_option("--plan", a->plan, "A plan.yaml from axo plan (one GPU) instead of --model");
  cmd->add_option("--data", o.data, "Training token shards (glob)")->required();
  cmd->add_option("--val-data", o.val_data, "Validation token shards (glob)");
  cmd->add_option("--steps", o.steps, "Optimizer steps")->check(CLI::PositiveNumber);
  cmd->add_option("--stop-after", o.stop_after, "Stop this run at this step (resume later with --resume)")->check(CLI::PositiveNumber);
  o.batch = 0, o.microbatch = 0;  // defaults: the model's global batch, the plan's microbatch
  cmd->add_option("--batch", o.batch, "Sequences per step (default: the model's global batch)")->check(CLI::PositiveNumber);
  cmd->add_option("--microbatch", o.microbatch, "Sequences per forward/backward (default: the plan's, else the batch)")->check(CLI::PositiveNumber);
  cmd->add_option("--seq", o.seq, "Sequence length (default: the model's)")->check(CLI::PositiveNumber);
  cmd->add_option("--lr", o.lr, "Peak learning rate")->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o.warmup, "Warm-up steps")->check(CLI::NonNegativeNumber);
  cmd->add_option("--weight-decay", o.weight_decay, "AdamW weight decay on matrices")->check(CLI::NonNegativeNumber);
  cmd->add_option("--grad-clip", o.grad_clip, "Clip the global gradient norm (0: off)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o.seed, "Random seed of the initialisation");
  cmd->add_option("--val-every", o.val_every, "Steps between validation losses")->check(CLI::NonNegativeNumber);
  cmd->add_option("--init-from", o.init_from, "Start from an llm.c GPT-2 model file");
  cmd->add_option("--save-model", o.save_model, "Write the trained model as an llm.c file");
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "Folder of training checkpoints");
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--resume", o.resume, "Continue from the newest good checkpoint");
  cmd->add_option("--run", o.run_json, "Write measured times per step (run.json)");
  cmd->callback([a] { run(*a); });
}

}  // namespace axo::tools
