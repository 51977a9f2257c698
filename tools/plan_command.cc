// `axo plan`: search the configuration space for a model on N GPUs of a
// machine, print the best, and write CSV / JSON / plan.yaml on request, or
// export the chosen configuration to Megatron-LM, AxoNN, torchtitan or Slurm.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>
#include <tuple>
#include <vector>
#include <iostream>
#include <nlohmann/json.hpp>

#include "executor/gpt/gpt.h"
#include "model/error.h"
#include "model/atomic_file.h"
#include "model/cost_fp8.h"
#include "model/plan_file.h"
#include "model/presets.h"
#include "model/transformer_spec.h"
#include "planner/explain.h"
#include "planner/export.h"
#include "planner/format.h"
#include "planner/plan_table.h"
#include "planner/prediction_band.h"
#include "planner/search.h"
#include "planner/space_plot.h"
#include "planner/training_explain.h"
#include "tools/commands.h"
#include "tools/output_path.h"

namespace axo::tools {

namespace {

struct PlanOptions {
  std::string model, machine, fix, csv, json, out, emit, emit_out, svg, rank_by = "iteration";
  std::string precision;  // empty: the model's
  TokenBudget budget;  // --tokens, --gpu-hour-price
  int64_t gpus = 0, batch = 0, seq = 0;
  size_t top = 10;
  size_t rank = 0;  // 0: the best; K: the K-th row of the table
  bool explain = false;
};

// Where the Slurm script's plan is written: --out, else beside --emit-out, named after it
// (job.sbatch: job.plan.yaml; two scripts in one folder keep their own plans), else nowhere
// (plan.yaml, for the user to write).
std::string slurm_plan_path(const PlanOptions& o) {
  if (!o.out.empty()) return o.out;
  if (o.emit_out.empty()) return "plan.yaml";
  return std::filesystem::path(o.emit_out).replace_extension(".plan.yaml").string();
}

// The plan as the script names it: absolute where axo writes it, so that the job finds it from
// whichever folder it is submitted.
std::string slurm_script_plan_path(const PlanOptions& o) {
  const std::string path = slurm_plan_path(o);
  if (o.out.empty() && o.emit_out.empty()) return path;
  return std::filesystem::absolute(path).lexically_normal().string();
}

// The model with --batch and --seq applied, validated.
TransformerSpec load_spec(const PlanOptions& o) {
  TransformerSpec spec = load_model(o.model, {o.batch, o.seq});
  if (!o.precision.empty()) spec.precision = parse_precision(o.precision, "--precision");
  if (spec.global_batch == 0) {
    throw InputError(o.model + ": no global batch size in the model file; pass --batch");
  }
  validate(spec, o.model);
  // The cost model prices full causal attention (cost_attention.h): a shorter window is not it.
  if (spec.sliding_window > 0 && spec.sliding_window < spec.seq_len) {
    throw InputError(o.model + ": field 'sliding_window': attention over the last " +
                     std::to_string(spec.sliding_window) + " tokens, fewer than the sequence of " +
                     std::to_string(spec.seq_len) + ": axo prices full causal attention (plan with --seq " +
                     std::to_string(spec.sliding_window) + " or less, where the window holds the whole sequence)");
  }
  return spec;
}

SearchOptions search_options(const PlanOptions& o) {
  SearchOptions options;
  options.gpus = o.gpus;
  options.top = std::max(o.top, o.rank);
  options.fixed = parse_fix(o.fix);
  options.rank_by = parse_rank_by(o.rank_by);
  options.budget = o.budget;
  options.record_points = !o.svg.empty();
  options.prune = o.svg.empty();  // the picture shows every configuration that fits
  if (o.budget.gpu_hour_price > 0 && o.budget.tokens <= 0) {
    throw InputError("--gpu-hour-price needs --tokens (the cost is that of training on that many tokens)");
  }
  // Far beyond any run (Llama 3 trained on 15.6e12 tokens) or price, and finite in days and cost.
  constexpr double kMostTokens = 1e17, kMostGpuHourPrice = 1e7;
  if (o.budget.tokens > kMostTokens) {
    throw InputError(format("--tokens %g: at most %g tokens", o.budget.tokens, kMostTokens));
  }
  if (o.budget.gpu_hour_price > kMostGpuHourPrice) {
    throw InputError(format("--gpu-hour-price %g: at most %g per GPU-hour", o.budget.gpu_hour_price, kMostGpuHourPrice));
  }
  const FixedFields& fixed = options.fixed;
  if (fixed.all_grid_fixed() && fixed.values.gpus() != o.gpus) {
    throw InputError("--fix: pipeline*data*context*z*y*x = " + std::to_string(fixed.values.gpus()) +
                     " does not equal --gpus " + std::to_string(o.gpus));
  }
  return options;
}

void print_summary(FILE* report, const PlanOptions& o, const CostModel& model,
                   const SearchResult& result) {
  std::fprintf(report, "%s (%s parameters, %s) on %lld x %s: %lld configurations over %lld grids, "
               "%lld evaluated and %lld bounded out, in %.3f s\n",
               model.spec().name.c_str(), parameter_count_text(model.spec().parameter_count()).c_str(),
               to_string(model.spec().precision),
               (long long)o.gpus, model.machine().name.c_str(),
               (long long)(result.evaluated + result.pruned), (long long)result.grids,
               (long long)result.evaluated, (long long)result.pruned, result.seconds);
  // A config.json's sequence is its whole context unless --seq sets one (131072 for Llama 3.1).
  if (o.seq == 0 && is_hf_config_path(o.model)) {
    std::fprintf(report, "Sequence: %lld tokens, the config.json's max_position_embeddings (--seq sets another)\n",
                 (long long)model.spec().seq_len);
  }
  // What the config.json has that axo prices as its nearest: said, not dropped silently.
  for (const std::string& detail : model.spec().approximations) {
    std::fprintf(report, "Approximated: %s\n", detail.c_str());
  }
}

// The error band of the machine's GPU type (from configs/validation), put
// on every row and the closest one.
PredictionBand put_band(const MachineProfile& machine, SearchResult& result) {
  PredictionBand band = prediction_band(machine.gpu_type, config_dir() + "/validation");
  if (!band.band) return band;
  auto put = [&band](PlanRow& row) {
    const auto [low, high] = band_limits(*band.band, row.breakdown.iter_time);
    row.band = IterationBand{low, high};
  };
  for (PlanRow& row : result.best) put(row);
  if (result.closest) put(*result.closest);
  return band;
}

nlohmann::ordered_json band_json(const PredictionBand& band) {
  nlohmann::ordered_json j;
  if (!band.band) {
    j["none"] = band.no_band;
    return j;
  }
  const ErrorBand& b = *band.band;
  j["gpu"] = b.gpu, j["runs"] = b.runs, j["coverage"] = b.coverage;
  j["low_pct"] = b.low_pct, j["high_pct"] = b.high_pct, j["text"] = band_text(b);
  return j;
}

// --csv and --json: the ranked rows that fit, and the explanation of the best (or --rank K) one,
// which `explained_rank` names (written once the plan stands: a failed plan writes nothing).
void write_tables(const PlanOptions& o, const CostModel& model, const SearchResult& result,
                  const PredictionBand& band) {
  const std::vector<PlanRow>& rows = result.best;
  if (!o.csv.empty()) write_plan_csv(rows, o.csv);
  if (o.json.empty()) return;
  nlohmann::ordered_json j;
  j["model"] = model.spec().name;
  j["machine"] = model.machine().name;
  j["precision"] = to_string(model.spec().precision);
  j["gpus"] = o.gpus;
  j["evaluated"] = result.evaluated;
  j["search_seconds"] = result.seconds;
  j["configurations"] = plan_rows_to_json(rows);
  const size_t explained = o.rank > 0 ? o.rank : 1;  // check_rank: within the rows
  j["explained_rank"] = explained;
  j["explain"] = explain_json(model, rows[explained - 1].config);
  j["training"] = training_estimate_json(rows[explained - 1].training);
  j["error_band"] = band_json(band);
  write_file_atomically(o.json, j.dump(2) + "\n");
}

// --svg: every configuration that fits, the top 10 labelled.
void write_svg(FILE* report, const PlanOptions& o, const CostModel& model, const SearchResult& result) {
  const std::vector<PlanRow> labelled(result.best.begin(),
                                      result.best.begin() + std::min<size_t>(10, result.best.size()));
  const MachineProfile& machine = model.machine();
  write_space_plot(result.points, labelled, machine.usable_memory_bytes(),
                   model.spec().name + " on " + std::to_string(o.gpus) + " x " + machine.name, o.svg);
  std::fprintf(report, "Wrote the space of %zu configurations to %s\n", result.points.size(), o.svg.c_str());
}

// When nothing fits: explains the closest configuration (with --explain) and says by how much it misses.
[[noreturn]] void fail_without_fit(const PlanOptions& o, const CostModel& model,
                                   const SearchOptions& options, const SearchResult& result,
                                   std::ostream& report_stream) {
  const std::string& name = model.spec().name;
  if (!result.closest) {
    const FixedFields& fixed = options.fixed;
    const std::string why = model.check_held(fixed, o.gpus);
    throw InputError("no configuration of " + name + " on " + std::to_string(o.gpus) +
                     " GPUs matches --fix " + o.fix + (why.empty() ? "" : ": " + why));
  }
  const Breakdown& b = result.closest->breakdown;
  constexpr double GiB = double(1ull << 30);
  if (o.explain) report_stream << "\n" << explain_text(model, result.closest->config);
  char message[256];
  std::snprintf(message, sizeof message,
                "nothing fits in %.2f GiB per GPU; the closest configuration (shown) needs %.2f GiB, "
                "%.2f GiB too much",
                b.memory_capacity / GiB, b.memory.total() / GiB,
                (b.memory.total() - b.memory_capacity) / GiB);
  throw InputError(name + " on " + std::to_string(o.gpus) + " GPUs of " + model.machine().name +
                   ": " + message);
}

void check_rank(const PlanOptions& o, const CostModel& model, const SearchResult& result) {
  if (o.rank <= result.best.size()) return;
  const size_t fitting = result.best.size();
  throw InputError("--rank " + std::to_string(o.rank) + ": only " + std::to_string(fitting) +
                   " configuration" + (fitting == 1 ? "" : "s") + " of " + model.spec().name +
                   " on " + std::to_string(o.gpus) + " GPUs " + (fitting == 1 ? "fits" : "fit") +
                   " (ranks 1 to " + std::to_string(fitting) + ")");
}

// A goodput of 0 (failures faster than restarts): a token budget or a cost ranking has no finite
// answer, refused; otherwise a note under the table says why the goodput column reads 0.
void check_progress(FILE* report, const PlanOptions& o, RankBy rank_by, const PlanRow& chosen,
                    const MachineProfile& machine) {
  const std::string why = no_progress_reason(chosen.training.goodput, o.gpus, machine);
  if (why.empty()) return;
  if (o.budget.tokens > 0 || rank_by == RankBy::cost) {
    throw InputError((o.budget.tokens > 0 ? "--tokens: " : "--rank-by cost: ") + why + "; see " + o.machine +
                     "'s failures_per_gpu_hour, restart_s and checkpoint_filesystem_GBps");
  }
  std::fprintf(report, "Note: %s.\n", why.c_str());
}

// Where plan.yaml is written: --out, else for a Slurm script written to --emit-out the
// plan beside it (the script must find the plan it runs), else nowhere ("").
std::string plan_out_path(const PlanOptions& o, bool emit, ExportFormat format) {
  if (!o.out.empty()) return o.out;
  if (emit && format == ExportFormat::slurm && !o.emit_out.empty()) return slurm_plan_path(o);
  return "";
}

// --out (and the plan a Slurm script beside --emit-out runs).
void write_plan(FILE* report, const PlanOptions& o, const CostModel& model, const PlanRow& chosen,
                size_t chosen_rank, bool emit, ExportFormat format, const PredictionBand& band) {
  const std::string plan_out = plan_out_path(o, emit, format);
  if (plan_out.empty()) return;
  Plan plan{model.spec(), model.machine().name, o.gpus, chosen.config, chosen.breakdown, 0, 0, band.text()};
  if (chosen.band) plan.iter_time_low_s = chosen.band->low_s, plan.iter_time_high_s = chosen.band->high_s;
  write_plan_file(plan, plan_out);
  if (chosen_rank == 1) {
    std::fprintf(report, "Wrote the best configuration to %s\n", plan_out.c_str());
  } else {
    std::fprintf(report, "Wrote configuration %zu to %s\n", chosen_rank, plan_out.c_str());
  }
}

// The Megatron-DeepSpeed arguments beside the ds_config JSON: in a sidecar
// <emit-out>.args.sh, else on stderr (stdout holds the JSON alone).
void write_deepspeed_arguments(FILE* report, const PlanOptions& o, const CostModel& model,
                               const PlanRow& chosen, const ExportContext& context) {
  const std::string arguments =
      deepspeed_launch_arguments(model.spec(), model.machine(), chosen.config, context);
  if (o.emit_out.empty()) {
    std::fputs(arguments.c_str(), stderr);
    return;
  }
  const std::string sidecar = o.emit_out + ".args.sh";
  write_file_atomically(sidecar, arguments);
  std::fprintf(report, "Wrote its Megatron-DeepSpeed arguments to %s\n", sidecar.c_str());
}

// --emit: the chosen configuration in `format`, to stdout or --emit-out.
void write_export(FILE* report, const PlanOptions& o, const CostModel& model, const PlanRow& chosen,
                  size_t chosen_rank, ExportFormat format, const PredictionBand& band) {
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "Configuration %zu of the ranked table: predicted %.4f s per iteration",
                chosen_rank, chosen.breakdown.iter_time);
  char rate[64];
  std::snprintf(rate, sizeof rate, "), %.1f TFLOP/s per GPU.", chosen.breakdown.tflops_per_gpu);
  const std::string note = numbers + (" (" + band.text()) + rate;
  ExportContext context;
  context.plan_path = slurm_script_plan_path(o);
  if (!o.emit_out.empty()) context.deepspeed_config_path = o.emit_out;
  context.note = note;
  const std::string text = export_plan(format, model.spec(), model.machine(), chosen.config, context);
  if (!o.emit_out.empty()) {
    write_file_atomically(o.emit_out, text);
    std::fprintf(report, "Wrote the %s export of configuration %zu to %s\n", to_string(format),
                 chosen_rank, o.emit_out.c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  if (format == ExportFormat::deepspeed) write_deepspeed_arguments(report, o, model, chosen, context);
  if (format == ExportFormat::slurm && plan_out_path(o, true, format).empty()) {  // nothing wrote it
    std::fprintf(stderr, "The script runs %s: write it with --out %s\n",
                 context.plan_path.c_str(), context.plan_path.c_str());
  }
}

// A model the export cannot state is refused before the search: no plan of it would do. The
// Slurm script runs axo train, which trains what its executor does (gpt_shape).
void check_export_model(ExportFormat format, const TransformerSpec& spec) {
  if (const std::string why = export_model_problem(format, spec); !why.empty()) {
    throw InputError("--emit " + std::string(to_string(format)) + ": " + why);
  }
  if (format != ExportFormat::slurm) return;
  try {
    gpt_shape(spec);
  } catch (const InputError& e) {
    throw InputError("--emit slurm: the script runs axo train, which cannot train this model: " + std::string(e.what()));
  }
}

// Every file the command will write, by option: two naming one file would overwrite each other
// (a Slurm script replacing the plan.yaml it runs), and one naming the model or machine file would
// replace it: usage errors before any work.
void check_distinct_outputs(const PlanOptions& o, bool emit, ExportFormat format) {
  std::vector<std::pair<std::string, std::string>> outputs;  // option, path
  for (const auto& [option, path] : {std::pair{"--csv", o.csv}, {"--json", o.json}, {"--svg", o.svg},
                                     {"--emit-out", o.emit_out}}) {
    if (!path.empty()) outputs.emplace_back(option, path);
  }
  if (const std::string plan = plan_out_path(o, emit, format); !plan.empty()) {
    outputs.emplace_back(o.out.empty() ? "--emit-out's .plan.yaml" : "--out", plan);
  }
  if (emit && format == ExportFormat::deepspeed && !o.emit_out.empty()) {
    outputs.emplace_back("--emit-out's .args.sh", o.emit_out + ".args.sh");
  }
  reject_shared_outputs(outputs);
  for (const auto& [option, path] : outputs) check_output_file(option, path);  // the derived ones too
  std::vector<std::pair<std::string, std::string>> inputs;  // what, path
  add_preset_input(inputs, "the --model file", "models", o.model);
  add_preset_input(inputs, "the --machine file", "machines", o.machine);
  reject_outputs_over_inputs(outputs, inputs);
}

void run_plan(const PlanOptions& o) {
  // Parse --emit before the search so a typo costs nothing.
  const bool emit = !o.emit.empty();
  const ExportFormat format = emit ? parse_export_format(o.emit) : ExportFormat::slurm;
  if (!o.emit_out.empty() && !emit) throw InputError("--emit-out needs --emit FORMAT");
  check_distinct_outputs(o, emit, format);
  // Exporting to stdout keeps stdout for the export alone; the report goes to stderr.
  FILE* report = emit && o.emit_out.empty() ? stderr : stdout;
  std::ostream& report_stream = report == stderr ? std::cerr : std::cout;

  const TransformerSpec spec = load_spec(o);
  if (emit) check_export_model(format, spec);
  const MachineProfile machine = load_machine(o.machine);
  if (const std::string problem = precision_problem(spec.precision, machine, resolve_preset("machines", o.machine));
      !problem.empty()) {
    throw InputError((o.precision.empty() ? o.model + ": " : "--precision: ") + problem);
  }
  const CostModel model(spec, machine);
  const SearchOptions options = search_options(o);
  SearchResult result = search(model, options);
  const PredictionBand band = put_band(machine, result);

  print_summary(report, o, model, result);
  std::fputs(partial_calibration_note(machine, o.machine).c_str(), report);
  std::fputs(one_node_calibration_note(machine, o.machine, options.gpus).c_str(), report);
  std::fprintf(report, "Iteration time band: %s\n", band.text().c_str());
  std::vector<PlanRow> rows = result.best;
  if (rows.empty() && result.closest) rows.push_back(*result.closest);
  if (!result.best.empty()) check_rank(o, model, result);  // before the table and the files: they show the rank
  if (!rows.empty()) std::fputs(plan_table_text(rows).c_str(), report);
  const size_t chosen_rank = o.rank > 0 ? o.rank : 1;
  // An export the target cannot express is refused before any file is written.
  if (emit && !result.best.empty() &&
      !export_limitation(format, spec, machine, result.best[chosen_rank - 1].config).empty()) {
    throw InputError(inexpressible_message(format, model, options, result.best[chosen_rank - 1]));
  }
  if (result.best.empty()) fail_without_fit(o, model, options, result, report_stream);
  const PlanRow& chosen = result.best[chosen_rank - 1];
  check_progress(report, o, options.rank_by, chosen, machine);
  write_tables(o, model, result, band);
  if (o.explain) {
    report_stream << "\n" << explain_text(model, chosen.config) << "\n"
                  << band_explain_text(chosen.breakdown.iter_time, band)
                  << training_estimate_text(chosen.training, o.gpus, machine);
  }
  if (!o.svg.empty()) write_svg(report, o, model, result);

  write_plan(report, o, model, chosen, chosen_rank, emit, format, band);
  if (emit) write_export(report, o, model, chosen, chosen_rank, format, band);
}

}  // namespace

// The most rows --top keeps and --rank reaches: the search keeps its table sorted as it goes, so a
// table of millions took minutes (10^4 rows take about a second).
constexpr int64_t kMostTableRows = 10000;

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  const CLI::Range counts(int64_t(1), kLargestCount, "at most 2^30");
  const CLI::Range rows(int64_t(1), kMostTableRows, "at most 10000 rows");
  CLI::App* plan = app.add_subcommand("plan", "Search the parallel configurations of a model on N GPUs");
  plan->add_option("--model", options->model, "Model preset name or file (.yaml spec or HF config.json)")->required();
  plan->add_option("--gpus", options->gpus, "Number of GPUs")->required()->check(positive())->check(counts);
  plan->add_option("--machine", options->machine, "Machine preset name or profile file")->required();
  plan->add_option("--batch", options->batch, "Global batch in sequences (overrides the model's)")
      ->check(positive())
      ->check(counts);
  plan->add_option("--seq", options->seq, "Sequence length (overrides the model's)")
      ->check(whole_number_in(1, kMostSeqLen));
  plan->add_option("--precision", options->precision,
                   "Training precision: fp8 (Transformer Engine's fp8 GEMMs over bf16 tensors; the machine "
                   "needs peak_tflops.fp8), bf16, fp16 or fp32 (default: the model's)");
  plan->add_option("--top", options->top, "How many configurations to keep")->check(positive())->check(rows);
  plan->add_option("--fix", options->fix, fix_help());
  plan->add_option("--csv", options->csv, "Write the ranked configurations as CSV")->check(output_path());
  plan->add_option("--json", options->json,
                   "Write the ranked configurations and the best (or --rank K) one's explanation as JSON")
      ->check(output_path());
  plan->add_option("--out", options->out, "Write the best (or --rank K) configuration as plan.yaml for axo train")
      ->check(output_path());
  plan->add_option("--rank", options->rank, "Use the K-th row of the ranked table instead of the best (1 = best)")
      ->check(positive())
      ->check(rows);
  plan->add_option("--emit", options->emit, "Export the chosen configuration: megatron, axonn, torchtitan, deepspeed or slurm")
      ->check(non_empty("names no export format"));
  plan->add_option("--emit-out", options->emit_out, "Write the export to this file instead of stdout")->check(output_path());
  plan->add_flag("--explain", options->explain, "Explain the best (or fixed) configuration cost by cost");
  plan->add_option("--tokens", options->budget.tokens, "Token budget, e.g. 15e12: adds train_days and gpu_hours (after failures and checkpoints)")->check(positive());
  plan->add_option("--gpu-hour-price", options->budget.gpu_hour_price, "Price of a GPU-hour: adds the cost of --tokens")->check(positive());
  // parse_rank_by checks the name (and says why goodput is no ranking).
  plan->add_option("--rank-by", options->rank_by, "Rank by iteration (time) or cost (GPU-hours per token: iteration time / goodput, under failures)");
  plan->add_option("--svg", options->svg, "Draw every configuration that fits (iteration time against memory per GPU, the Pareto front, the top 10) as SVG; costs every configuration")
      ->check(output_path());
  plan->callback([options] { run_plan(*options); });
}

}  // namespace axo::tools
