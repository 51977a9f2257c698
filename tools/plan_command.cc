// `axo plan`: search the configuration space for a model on N GPUs of a
// machine, print the best, and write CSV / JSON / plan.yaml on request, or
// export the chosen configuration to Megatron-LM, AxoNN, torchtitan or Slurm.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/error.h"
#include "model/atomic_file.h"
#include "model/plan_file.h"
#include "model/presets.h"
#include "planner/explain.h"
#include "planner/export.h"
#include "planner/plan_table.h"
#include "planner/row_folding.h"
#include "planner/search.h"
#include "planner/space_plot.h"
#include "planner/training_explain.h"
#include "tools/commands.h"

namespace axo::tools {

namespace {

struct PlanOptions {
  std::string model, machine, fix, csv, json, out, emit, emit_out, svg, rank_by = "iteration";
  TokenBudget budget;  // --tokens, --gpu-hour-price
  int64_t gpus = 0, batch = 0, seq = 0;
  size_t top = 10;
  size_t rank = 0;  // 0: the best; K: the K-th row of the table
  bool explain = false;
};

// Goodput, checkpoint interval, and with --tokens days, GPU-hours (and cost); then the variants.
void print_training_header(FILE* stream, const PlanRow& first) {
  std::fprintf(stream, " | %7s %7s", "goodput", "ckpt_s");
  if (first.training.has_time) std::fprintf(stream, " %9s %10s", "days", "GPU_hours");
  if (first.training.has_cost) std::fprintf(stream, " %10s", "cost");
  std::fprintf(stream, "  %s\n", "variants (same numbers)");
}

void print_training_cells(FILE* stream, const PlanRow& row) {
  const TrainingEstimate& t = row.training;
  std::fprintf(stream, " | %7.4f %7.0f", t.goodput.goodput, t.goodput.checkpoint_interval_s);
  if (t.has_time) std::fprintf(stream, " %9.2f %10.4g", t.time.train_days, t.time.gpu_hours);
  if (t.has_cost) std::fprintf(stream, " %10.4g", t.time.cost);
  std::fprintf(stream, "  %s\n", variants_text(row.config, row.same_numbers).c_str());
}

void print_table(FILE* stream, const std::vector<PlanRow>& rows) {
  constexpr double GiB = double(1ull << 30);
  std::fprintf(stream, "%4s %4s %4s %3s %3s %3s %4s %-9s %3s %3s %3s %3s %-5s %9s %7s %6s %7s %4s | %8s %8s %8s %8s %8s %8s %8s",
              "rank", "pipe", "data", "x", "y", "z", "mb", "recompute", "off", "ovl", "sp", "il",
              "order", "iter_s", "TF/GPU", "%peak", "mem_GiB", "fits", "compute", "tp_comm", "bubble",
              "pp_comm", "dp_comm", "offload", "optim");
  print_training_header(stream, rows.front());
  for (size_t r = 0; r < rows.size(); ++r) {
    const ParallelConfig& c = rows[r].config;
    const Breakdown& b = rows[r].breakdown;
    std::fprintf(stream, "%4zu %4lld %4lld %3lld %3lld %3lld %4lld %-9s %3s %3s %3s %3lld %-5s %9.4f %7.1f %6.1f %7.2f %4s | %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f",
                r + 1, (long long)c.pipeline, (long long)c.data, (long long)c.x, (long long)c.y,
                (long long)c.z, (long long)c.microbatch, to_string(c.recompute), c.offload ? "on" : "off",
                c.overlap ? "on" : "off", c.sequence_parallel ? "on" : "off", (long long)c.interleave,
                c.order_string().c_str(), b.iter_time, b.tflops_per_gpu, b.pct_peak,
                b.memory.total() / GiB, b.fits ? "yes" : "no", b.compute, b.tp_comm, b.bubble,
                b.pp_comm, b.dp_comm, b.offload, b.optimizer);
    print_training_cells(stream, rows[r]);
  }
}

// Where the Slurm script finds the plan: --out, else plan.yaml beside --emit-out.
std::string slurm_plan_path(const PlanOptions& o) {
  if (!o.out.empty()) return o.out;
  if (o.emit_out.empty()) return "plan.yaml";
  return (std::filesystem::path(o.emit_out).parent_path() / "plan.yaml").string();
}

void run_plan(const PlanOptions& o) {
  // Parse --emit before the search so a typo costs nothing.
  const bool emit = !o.emit.empty();
  const ExportFormat format = emit ? parse_export_format(o.emit) : ExportFormat::slurm;
  if (!o.emit_out.empty() && !emit) throw InputError("--emit-out needs --emit FORMAT");
  // Exporting to stdout keeps stdout for the export alone; the report goes to stderr.
  FILE* report = emit && o.emit_out.empty() ? stderr : stdout;
  std::ostream& report_stream = report == stderr ? std::cerr : std::cout;

  TransformerSpec spec = load_model(o.model);
  if (o.batch > 0) spec.global_batch = o.batch;
  if (o.seq > 0) spec.seq_len = o.seq;
  if (spec.global_batch == 0) {
    throw InputError(o.model + ": no global batch size in the model file; pass --batch");
  }
  validate(spec, o.model);
  const MachineProfile machine = load_machine(o.machine);
  const CostModel model(spec, machine);
  SearchOptions search_options;
  search_options.gpus = o.gpus;
  search_options.top = std::max(o.top, o.rank);
  search_options.fixed = parse_fix(o.fix);
  search_options.rank_by = parse_rank_by(o.rank_by);
  search_options.budget = o.budget;
  search_options.record_points = !o.svg.empty();
  search_options.prune = o.svg.empty();  // the picture shows every configuration that fits
  if (o.budget.gpu_hour_price > 0 && o.budget.tokens <= 0) {
    throw InputError("--gpu-hour-price needs --tokens (the cost is that of training on that many tokens)");
  }
  const FixedFields& fixed = search_options.fixed;
  if (fixed.all_grid_fixed() && fixed.values.gpus() != o.gpus) {
    throw InputError("--fix: pipeline*data*z*y*x = " + std::to_string(fixed.values.gpus()) +
                     " does not equal --gpus " + std::to_string(o.gpus));
  }
  const SearchResult result = search(model, search_options);

  std::fprintf(report, "%s (%s parameters) on %lld x %s: %lld configurations over %lld grids, "
               "%lld evaluated and %lld bounded out, in %.3f s\n",
               spec.name.c_str(), parameter_count_text(spec.parameter_count()).c_str(), (long long)o.gpus,
               machine.name.c_str(), (long long)(result.evaluated + result.pruned),
               (long long)result.grids, (long long)result.evaluated, (long long)result.pruned,
               result.seconds);
  std::vector<PlanRow> rows = result.best;
  if (rows.empty() && result.closest) rows.push_back(*result.closest);
  if (!rows.empty()) print_table(report, rows);
  if (!o.csv.empty()) write_plan_csv(rows, o.csv);
  if (!o.json.empty()) {
    nlohmann::ordered_json j;
    j["model"] = spec.name;
    j["machine"] = machine.name;
    j["gpus"] = o.gpus;
    j["evaluated"] = result.evaluated;
    j["search_seconds"] = result.seconds;
    j["configurations"] = plan_rows_to_json(rows);
    if (!rows.empty()) j["explain"] = explain_json(model, rows.front().config);
    if (!rows.empty()) j["training"] = training_estimate_json(rows.front().training);
    write_file_atomically(o.json, j.dump(2) + "\n");
  }
  if (result.best.empty()) {
    if (!result.closest) {
      const std::string why = fixed.all_grid_fixed() ? model.check(fixed.values) : "";
      throw InputError("no configuration of " + spec.name + " on " + std::to_string(o.gpus) +
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
    throw InputError(spec.name + " on " + std::to_string(o.gpus) + " GPUs of " + machine.name +
                     ": " + message);
  }
  if (o.rank > result.best.size()) {
    throw InputError("--rank " + std::to_string(o.rank) + ": only " +
                     std::to_string(result.best.size()) + " configuration" +
                     (result.best.size() == 1 ? "" : "s") + " of " + spec.name + " on " +
                     std::to_string(o.gpus) + " GPUs " +
                     (result.best.size() == 1 ? "fits" : "fit") + " (ranks 1 to " +
                     std::to_string(result.best.size()) + ")");
  }
  const size_t chosen_rank = o.rank > 0 ? o.rank : 1;
  const PlanRow& chosen = result.best[chosen_rank - 1];
  if (o.explain) {
    report_stream << "\n" << explain_text(model, chosen.config) << "\n"
                  << training_estimate_text(chosen.training, o.gpus, machine);
  }
  if (!o.svg.empty()) {
    const std::vector<PlanRow> labelled(result.best.begin(),
                                        result.best.begin() + std::min<size_t>(10, result.best.size()));
    write_space_plot(result.points, labelled, machine.usable_memory_bytes(),
                     spec.name + " on " + std::to_string(o.gpus) + " x " + machine.name, o.svg);
    std::fprintf(report, "Wrote the space of %zu configurations to %s\n", result.points.size(), o.svg.c_str());
  }

  std::string plan_out = o.out;
  if (emit && format == ExportFormat::slurm && plan_out.empty() && !o.emit_out.empty()) {
    plan_out = slurm_plan_path(o);  // the script must find the plan it runs
  }
  if (emit) {
    if (const std::string why = export_limitation(format, spec, machine, chosen.config);
        !why.empty()) {
      throw InputError(inexpressible_message(format, model, search_options, chosen));
    }
  }
  if (!plan_out.empty()) {
    Plan plan{spec, machine.name, o.gpus, chosen.config, chosen.breakdown};
    write_plan_file(plan, plan_out);
    if (chosen_rank == 1) {
      std::fprintf(report, "Wrote the best configuration to %s\n", plan_out.c_str());
    } else {
      std::fprintf(report, "Wrote configuration %zu to %s\n", chosen_rank, plan_out.c_str());
    }
  }
  if (emit) {
    char note[160];
    std::snprintf(note, sizeof note, "Configuration %zu of the ranked table: predicted %.4f s per "
                  "iteration, %.1f TFLOP/s per GPU.", chosen_rank, chosen.breakdown.iter_time,
                  chosen.breakdown.tflops_per_gpu);
    ExportContext context;
    context.plan_path = slurm_plan_path(o);
    context.note = note;
    const std::string text = export_plan(format, spec, machine, chosen.config, context);
    if (o.emit_out.empty()) {
      std::fputs(text.c_str(), stdout);
      if (format == ExportFormat::slurm && o.out.empty()) {
        std::fprintf(stderr, "The script runs %s: write it with --out %s\n",
                     context.plan_path.c_str(), context.plan_path.c_str());
      }
    } else {
      write_file_atomically(o.emit_out, text);
      std::fprintf(report, "Wrote the %s export of configuration %zu to %s\n", to_string(format),
                   chosen_rank, o.emit_out.c_str());
    }
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* plan = app.add_subcommand("plan", "Search the parallel configurations of a model on N GPUs");
  plan->add_option("--model", options->model, "Model preset name or file (.yaml spec or HF config.json)")->required();
  plan->add_option("--gpus", options->gpus, "Number of GPUs")->required()->check(CLI::PositiveNumber);
  plan->add_option("--machine", options->machine, "Machine preset name or profile file")->required();
  plan->add_option("--batch", options->batch, "Global batch in sequences (overrides the model's)")->check(CLI::PositiveNumber);
  plan->add_option("--seq", options->seq, "Sequence length (overrides the model's)")->check(CLI::PositiveNumber);
  plan->add_option("--top", options->top, "How many configurations to keep")->check(CLI::PositiveNumber);
  plan->add_option("--fix", options->fix, "Hold fields fixed: pipeline=8,data=4,x=1,y=8,z=1,microbatch=1,recompute=full,offload=off,overlap=on,sequence_parallel=off,interleave=1,order=xyzdp");
  plan->add_option("--csv", options->csv, "Write the ranked configurations as CSV");
  plan->add_option("--json", options->json, "Write the ranked configurations and the best one's explanation as JSON");
  plan->add_option("--out", options->out, "Write the best (or --rank K) configuration as plan.yaml for axo train");
  plan->add_option("--rank", options->rank, "Use the K-th row of the ranked table instead of the best (1 = best)")->check(CLI::PositiveNumber);
  plan->add_option("--emit", options->emit, "Export the chosen configuration: megatron, axonn, torchtitan or slurm");
  plan->add_option("--emit-out", options->emit_out, "Write the export to this file instead of stdout");
  plan->add_flag("--explain", options->explain, "Explain the best (or fixed) configuration cost by cost");
  plan->add_option("--tokens", options->budget.tokens, "Token budget, e.g. 15e12: adds train_days and gpu_hours (after failures and checkpoints)")->check(CLI::PositiveNumber);
  plan->add_option("--gpu-hour-price", options->budget.gpu_hour_price, "Price of a GPU-hour: adds the cost of --tokens")->check(CLI::PositiveNumber);
  plan->add_option("--rank-by", options->rank_by, "Rank by iteration (time), goodput (under failures) or cost (GPU-hours per token)")
      ->check(CLI::IsMember({"iteration", "goodput", "cost"}));
  plan->add_option("--svg", options->svg, "Draw every configuration that fits (iteration time against memory per GPU, the Pareto front, the top 10) as SVG; costs every configuration");
  plan->callback([options] { run_plan(*options); });
}

}  // namespace axo::tools
