// `axo train`: train a GPT on CPU ranks, one or (under mpirun) every rank
// of a plan's grid.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <limits>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "executor/comm/mpi_communicator.h"
#include "executor/cpu/gemm.h"
#include "executor/data/token_shards.h"
#include "executor/train/checkpoint.h"
#include "executor/train/trainer.h"
#include "model/byte_size.h"
#include "model/error.h"
#include "model/plan_file.h"
#include "model/presets.h"
#include "model/transformer_spec.h"
#include "tools/commands.h"
#include "tools/error_line.h"
#include "tools/output_path.h"

namespace axo::tools {

namespace {

struct TrainArguments {
  TrainOptions options;
  std::string model, plan, schedule = "message-driven", fault, overlap, device_memory, lr_schedule = "cosine";
  std::string precision;  // empty: the plan's or model's
  std::string loss_scale;  // empty: dynamic in fp16, else none
  bool offload = false;
  int optimizer_threads = 0;  // 0: the node's cores shared among its ranks
};

// --inject-fault kill:RANK:STEP or overflow:RANK:STEP (testing only).
void parse_fault(const std::string& text, TrainOptions& o) {
  int rank = -1;
  long long step = 0;
  char tail = 0;
  const bool overflow = text.rfind("overflow:", 0) == 0;
  const char* format = overflow ? "overflow:%d:%lld%c" : "kill:%d:%lld%c";
  if (std::sscanf(text.c_str(), format, &rank, &step, &tail) != 2 || rank < 0 || step < 1) {
    throw InputError("--inject-fault: expected kill:RANK:STEP or overflow:RANK:STEP, got '" + text + "'");
  }
  if (overflow) {
    o.overflow_rank = rank, o.overflow_step = step;
  } else {
    o.kill_rank = rank, o.kill_step = step;
  }
}

// OpenBLAS and AdamW threads per rank: the cores shared among this node's
// ranks (Open MPI says how many there are), unless OPENBLAS_NUM_THREADS or
// --optimizer-threads says otherwise. Records the node's ranks and cores in
// `o` for run.json.
void share_cores_among_ranks(TrainOptions& o, int optimizer_threads) {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  o.node_ranks = local ? std::max(1, std::atoi(local)) : 1;
  o.node_cores = int(std::thread::hardware_concurrency());
  const int share = std::max(1, o.node_cores / o.node_ranks);
  if (optimizer_threads > o.node_cores && o.node_cores > 0) {  // AdamW's threads share the node's cores
    throw InputError("--optimizer-threads " + std::to_string(optimizer_threads) + ": more than this node's " +
                     std::to_string(o.node_cores) + " hardware threads");
  }
  o.optimizer_threads = optimizer_threads > 0 ? optimizer_threads : share;
  if (std::getenv("OPENBLAS_NUM_THREADS")) return;
  cpu::set_gemm_threads(share);
}

// --model beside --plan must name the plan's model: the same name and shape.
void check_same_model(const TransformerSpec& given, const std::string& model_option,
                      const TransformerSpec& planned, const std::string& plan_path) {
  const bool same = given.name == planned.name && given.layers == planned.layers &&
                    given.hidden == planned.hidden && given.heads == planned.heads &&
                    given.kv_heads == planned.kv_heads && given.ffn_hidden == planned.ffn_hidden &&
                    given.vocab == planned.vocab && given.seq_len == planned.seq_len;
  if (same) return;
  throw InputError("--model " + model_option + " is " + given.name + " (" +
                   std::to_string(given.layers) + " layers, hidden " + std::to_string(given.hidden) +
                   ") but --plan " + plan_path + " plans " + planned.name + " (" +
                   std::to_string(planned.layers) + " layers, hidden " + std::to_string(planned.hidden) +
                   "): give the plan alone, or a plan of this model");
}

// The precision asked for: --precision if given, else the plan's (or model's).
Precision requested_precision(const std::string& option, const TransformerSpec& spec) {
  if (option.empty()) return spec.precision;
  return parse_precision(option, "--precision");
}

// What the CPU executor trains `requested` in: fp32, bf16 and fp16 as they are; fp8 in bf16 (its
// tensors are bf16, only its GEMMs would be fp8: model/cost_fp8.h), with a note on rank 0
// (issue 17: the log and run.json say so too).
Precision training_precision(Precision requested, const std::string& name, bool leader) {
  if (requested != Precision::fp8) return requested;
  const Precision trained = Precision::bf16;
  if (leader) {
    std::cout << "note: " << name << " in " << to_string(requested) << " (--precision or the plan's), which the CPU "
              << "executor does not train in; training in " << to_string(trained) << "\n";
  }
  return trained;
}

// The files train writes (--save-model, --run) are neither one another nor anything it reads: a
// token shard (--save-model onto a training shard replaced the data with the model), the plan,
// the model, the --init-from file, or a checkpoint in --checkpoint-dir (written over at the end,
// after --resume read it, or by a later checkpoint of that name).
void check_outputs_spare_inputs(const TrainArguments& a) {
  const TrainOptions& o = a.options;
  std::vector<std::pair<std::string, std::string>> outputs;  // option, path
  for (const auto& [option, path] : {std::pair{"--save-model", o.save_model}, {"--run", o.run_json}}) {
    if (!path.empty()) outputs.emplace_back(option, path);
  }
  reject_shared_outputs(outputs);
  std::vector<std::pair<std::string, std::string>> inputs{{"the --plan file", a.plan},
                                                          {"the --init-from model file", o.init_from}};
  add_preset_input(inputs, "the --model file", "models", a.model);
  reject_outputs_over_inputs(outputs, inputs);
  for (const auto& [option, path] : outputs) {
    if (!o.checkpoint_dir.empty() && same_file(path, o.checkpoint_dir)) {
      throw InputError(std::string(option) + " " + path + ": it is --checkpoint-dir, the folder train keeps its "
                       "checkpoints in: give the output its own file");
    }
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (!o.checkpoint_dir.empty() && is_checkpoint_name(path) &&
        same_file(folder.empty() ? "." : folder.string(), o.checkpoint_dir)) {
      throw InputError(std::string(option) + " " + path + ": it is a checkpoint of --checkpoint-dir " +
                       o.checkpoint_dir + ", which train reads and writes: give the output its own file");
    }
  }
  for (const auto& [option, pattern] : {std::pair{"--data", o.data}, {"--val-data", o.val_data}}) {
    for (const std::string& shard : pattern.empty() ? std::vector<std::string>{} : token_shard_paths(pattern)) {
      for (const auto& [output, path] : outputs) {
        if (same_file(path, shard)) throw InputError(output + " " + path + " is a shard " + option + " reads");
      }
    }
  }
}

// Trains; memory the machine cannot give (a --batch or model far beyond it) is a usage error
// naming the sizes asked for, not a bare std::bad_alloc.
void train_within_memory(const TransformerSpec& spec, const TrainOptions& options, Communicator& world,
                         std::ostream& log) {
  try {
    Trainer trainer(spec, options, world, log);
    trainer.run();
  } catch (const std::bad_alloc&) {
    throw InputError("out of host memory training " + spec.name + " (" + std::to_string(spec.parameter_count()) +
                     " parameters) with microbatches of " + std::to_string(options.microbatch) +
                     " sequences (--batch " + std::to_string(options.batch) + ", --microbatch " +
                     std::to_string(options.microbatch) + "): lower --microbatch, or train a smaller model");
  }
}

void run(TrainArguments& a) {
  MpiSession mpi(nullptr, nullptr);
  MpiCommunicator world(MPI_COMM_WORLD);
  share_cores_among_ranks(a.options, a.optimizer_threads);
  if (!a.device_memory.empty()) a.options.device_memory = parse_bytes(a.device_memory, "--device-memory");
  a.options.schedule.schedule = parse_schedule(a.schedule);
  a.options.lr_schedule = parse_lr_schedule(a.lr_schedule);
  if (!a.fault.empty()) parse_fault(a.fault, a.options);
  if (!a.overlap.empty()) a.options.overlap = parse_overlap(a.overlap, "--overlap");
  check_outputs_spare_inputs(a);
  TransformerSpec spec;
  if (!a.plan.empty()) {
    const Plan plan = read_plan_file(a.plan);
    if (plan.gpus != world.size()) {
      throw InputError(a.plan + ": a plan for " + std::to_string(plan.gpus) + " ranks, launched on " +
                       std::to_string(world.size()) + " (run it with mpirun -np " + std::to_string(plan.gpus) + ")");
    }
    spec = plan.model;
    a.options.grid = plan.config;
    if (a.options.microbatch == 0) a.options.microbatch = plan.config.microbatch;
    // The plan's batch and sequence over the file's (plan --batch and --seq set them there).
    if (!a.model.empty()) {
      check_same_model(load_model(a.model, {plan.model.global_batch, plan.model.seq_len}), a.model, plan.model, a.plan);
    }
  } else if (world.size() > 1) {
    throw InputError("training on " + std::to_string(world.size()) + " ranks needs --plan (its grid says how to split the model)");
  } else if (!a.model.empty()) {
    // Its seq_len sizes the positions: --seq only where the file has none.
    spec = load_model(a.model, {.global_batch = a.options.batch, .seq_len = 0, .missing_seq_len = a.options.seq});
  } else {
    throw InputError("--model or --plan is required");
  }
  if (a.offload) a.options.grid.offload = true;
  const Precision requested = requested_precision(a.precision, spec);
  a.options.precision = training_precision(requested, spec.name, world.rank() == 0);
  if (requested != a.options.precision) a.options.planned_precision = requested;
  // fp16 needs loss scaling for its range (executor/train/loss_scaler.h): on unless --loss-scale none.
  a.options.loss_scaling = a.loss_scale.empty() ? a.options.precision == Precision::fp16 : a.loss_scale == "dynamic";
  // Defaults from the model: its global batch, without accumulation.
  if (a.options.batch == 0) a.options.batch = spec.global_batch;
  if (a.options.microbatch == 0) a.options.microbatch = a.options.batch / a.options.grid.data;
  std::ofstream quiet;  // only rank 0 prints
  try {
    train_within_memory(spec, a.options, world, world.rank() == 0 ? std::cout : quiet);
  } catch (const std::exception& e) {
    if (world.size() == 1) throw;
    // A failure on some ranks only (one stage out of device memory) would
    // leave the others waiting in a collective: stop the whole launch.
    const bool input = dynamic_cast<const InputError*>(&e) != nullptr;
    print_error_line(std::string(input ? "error" : "failed") + " on rank " + std::to_string(world.rank()), e.what());
    MPI_Abort(MPI_COMM_WORLD, input ? 2 : 1);
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto a = std::make_shared<TrainArguments>();
  TrainOptions& o = a->options;
  CLI::App* cmd = app.add_subcommand("train", "Train a GPT on CPU ranks: one, or every rank of a plan under mpirun");
  cmd->add_option("--model", a->model, "Model preset or spec file (GPT-2 architecture)");
  cmd->add_option("--plan", a->plan, "A plan.yaml from axo plan: its model, grid, microbatch, recompute and overlap (--model, if given, must name the same model)");
  cmd->add_option("--data", o.data, "Training token shards (glob)")->required();
  cmd->add_option("--val-data", o.val_data, "Validation token shards (glob)");
  cmd->add_option("--steps", o.steps, "Optimizer steps")->check(positive());
  cmd->add_option("--stop-after", o.stop_after, "Stop this run at this step (resume later with --resume)")->check(positive());
  o.batch = 0, o.microbatch = 0;  // defaults: the model's global batch, the plan's microbatch
  cmd->add_option("--batch", o.batch, "Sequences per step (default: the model's global batch)")->check(positive());
  cmd->add_option("--microbatch", o.microbatch, "Sequences per forward/backward (default: the plan's, else the batch)")->check(positive());
  cmd->add_option("--seq", o.seq, "Sequence length (default: the model's)")->check(whole_number_in(1, kMostSeqLen));
  cmd->add_option("--lr", o.lr, "Peak learning rate (0: evaluation only, nothing changes)")->check(non_negative());
  cmd->add_option("--lr-schedule", a->lr_schedule, "Learning rate after warm-up: cosine (to lr/10), linear (to lr/10) or constant")
      ->check(CLI::IsMember({"cosine", "linear", "constant"}));
  cmd->add_option("--warmup", o.warmup, "Warm-up steps")->check(non_negative());
  cmd->add_option("--weight-decay", o.weight_decay, "AdamW weight decay on matrices")->check(non_negative());
  cmd->add_option("--grad-clip", o.grad_clip, "Clip the global gradient norm (0: off)")->check(non_negative());
  cmd->add_option("--seed", o.seed, "Random seed of the initialisation")
      ->check(whole_number_in(0, std::numeric_limits<uint64_t>::max()));
  cmd->add_option("--val-every", o.val_every, "Steps between validation losses")->check(non_negative());
  cmd->add_option("--init-from", o.init_from, "Start from an llm.c GPT-2 model file");
  cmd->add_option("--save-model", o.save_model, "Write the trained model as an llm.c file")->check(output_path());
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "Folder of training checkpoints");
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")->check(non_negative());
  cmd->add_flag("--resume", o.resume, "Continue from the newest good checkpoint");
  cmd->add_option("--schedule", a->schedule, "Pipeline schedule: message-driven (AxoNN) or 1f1b")
      ->check(CLI::IsMember({"message-driven", "1f1b"}));
  cmd->add_option("--overlap", a->overlap,
                  "Tensor-parallel overlaps: none or a list of oar (dX all-reduce under dW), ors (async dW "
                  "reduce-scatter), oag (weight all-gather prefetch); default: the plan's")
      ->check(non_empty("names no overlap (none, or a list of oar, ors, oag)"));
  cmd->add_flag("--offload", a->offload,
               "Keep the optimizer state (fp32 master weights, Adam moments) in host memory, as AxoNN's CPU "
               "offload does (default: the plan's offload)");
  cmd->add_option("--precision", a->precision,
                  "fp32, or bf16 or fp16 (mixed precision: 2-byte weights, gradients and kept activations, GEMM "
                  "operands in that format with fp32 accumulation; fp32 master weights, optimizer and reductions; "
                  "fp16 with dynamic loss scaling), or fp8 (trained in bf16, with a note); default: the plan's or "
                  "model's (fp8 in bf16)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16", "fp8"}));
  cmd->add_option("--loss-scale", a->loss_scale,
                  "dynamic: scale the loss (from 2^16), skip a step whose gradients overflow on any rank and halve "
                  "the scale, double it after 1000 clean steps; none (default: dynamic in fp16, else none)")
      ->check(CLI::IsMember({"none", "dynamic"}));
  cmd->add_option("--device-memory", a->device_memory,
                  "Each rank's device memory limit, e.g. 512MiB or 80GiB (default: none); a plan that needs "
                  "more fails naming what did not fit");
  cmd->add_option("--optimizer-threads", a->optimizer_threads,
                  "Threads for AdamW (default: the node's cores shared among its ranks)")
      ->check(positive());
  cmd->add_option("--inject-fault", a->fault, "Testing only: kill:RANK:STEP (that rank SIGKILLs itself mid-step), overflow:RANK:STEP (an inf gradient there)");
  cmd->add_option("--run", o.run_json, "Write measured times per step (run.json)")->check(output_path());
  cmd->callback([a] {
    // Each step's line as it is printed, also into a file or pipe: a log of a run the scheduler
    // killed ends at its last step, not at the last full 8 KiB buffer.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    run(*a);
  });
}

}  // namespace axo::tools
