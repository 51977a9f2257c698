// `axo report`: what the planner predicted against what a run measured. One
// --plan/--run pair: the components side by side (table, --csv, --svg
// stacked bars), and the device memory against the memory model where the
// run recorded it. Several pairs: one line each, the rank correlation and
// whether the planner's pick was the fastest within 10% (--csv, --svg
// scatter of predicted against measured iteration time). With --machine
// the plans are costed again on that profile (a refined one, say) instead
// of using the predictions stored in them.
#include <cmath>
#include <cstdio>
#include <optional>

#include "model/cost_fp8.h"
#include "model/cost_model.h"
#include "model/atomic_file.h"
#include "model/error.h"
#include "model/input_file.h"
#include "model/json_text.h"
#include "model/machine_profile.h"
#include "model/plan_file.h"
#include "model/presets.h"
#include "planner/export.h"
#include "report/breakdown_plot.h"
#include "report/comparison_csv.h"
#include "report/comparison_table.h"
#include "report/iteration_scatter_plot.h"
#include "report/memory_comparison.h"
#include "report/run_set.h"
#include "report/stage_comparison.h"
#include "tools/commands.h"
#include "tools/output_path.h"

namespace axo::tools {

namespace {

struct ReportOptions {
  std::vector<std::string> plans, runs;
  std::string csv, svg, machine;
  std::optional<MachineProfile> given;  // --machine's profile, loaded once (run_report)
};

Plan read_predicted_plan(const std::string& path, const ReportOptions& o) {
  Plan plan = read_plan_file(path);
  if (o.given) {
    const CostModel model(plan.model, *o.given);
    if (const std::string why = model.pricing_problem(plan.config); !why.empty()) {
      throw InputError(path + ": it cannot be costed on " + o.machine + " (" + resolve_preset("machines", o.machine) +
                       "): " + why);
    }
    plan.predicted = model.evaluate(plan.config);
    plan.machine = o.given->name;
  }
  if (!(plan.predicted.iter_time > 0)) {
    throw InputError(path + ": no 'predicted' breakdown to compare with (its predicted.iter_time_s is absent or 0): "
                     "write the plan with axo plan --out, or give --machine to price it");
  }
  return plan;
}

// read_run_of, with a note where the run ran on another kind of machine (CPU ranks, a GPU) than
// the profile that predicts it (--machine, else the plan's where it loads): the comparison is then
// of two machines (calibrate --refine refuses to fit one to the other).
MeasuredRun read_run_for(const std::string& path, const Plan& plan, const std::string& plan_path,
                         const ReportOptions& o) {
  MeasuredRun run = read_run_of(path, plan, plan_path);
  const std::string name = o.given ? o.machine : plan.machine;
  try {
    const MachineProfile profile = o.given ? *o.given : load_machine(name);
    if (const std::string why = backend_mismatch(run, profile, name); !why.empty()) std::printf("Note: %s\n", why.c_str());
  } catch (const InputError&) {
    // A calibrated profile's name, say: the plan's prediction is all there is.
  }
  return run;
}

// Under a component table: where the run's ranks shared cores, its components
// and the model's are split differently (see ranks_shared_cores).
void print_shared_cores_note(const std::string& path, const MeasuredRun& run) {
  if (!ranks_shared_cores(run)) return;
  std::printf("Note: %s ran %lld ranks on %lld cores per node: the time a rank waited in collectives for\n"
              "ranks that were not running is measured as communication, where the model counts it as\n"
              "their compute. Compare the totals.\n",
              path.c_str(), (long long)run.node_ranks, (long long)run.node_cores);
}

// The profile the plan was priced on (--machine, else the plan's `machine`), to price its stages;
// none, with a note saying why, when it cannot be loaded (a calibrated profile's name, say).
std::optional<MachineProfile> stage_machine(const ReportOptions& o, const Plan& plan) {
  if (o.given) return o.given;  // read_predicted_plan priced the plan on it
  const std::string name = plan.machine;
  std::optional<MachineProfile> machine;
  try {
    machine = load_machine(name);
  } catch (const std::exception& e) {
    std::printf("\nNote: %s prices its stages on machine '%s', which cannot be loaded (%s); pass --machine "
                "with that profile's file to predict each stage's seconds.\n",
                o.plans[0].c_str(), name.c_str(), e.what());
    return std::nullopt;  // the table says what is left out
  }
  // plan.yaml names its profile only: a preset of that name that prices the plan otherwise is
  // not the profile it was planned on (a copy with its stack edited, say).
  const CostModel model(plan.model, *machine);
  std::string why = model.pricing_problem(plan.config);
  if (why.empty()) {
    const double preset = model.evaluate(plan.config).iter_time;
    if (std::abs(preset - plan.predicted.iter_time) <= 1e-6 * plan.predicted.iter_time) return machine;
    char text[160];
    std::snprintf(text, sizeof text, "it predicts %.4f s, the preset %.4f s", plan.predicted.iter_time, preset);
    why = text;
  }
  std::printf("\nNote: %s was planned on another profile than the preset '%s' (%s), or by another axo; pass "
              "--machine with that profile's file to predict each stage's seconds.\n",
              o.plans[0].c_str(), name.c_str(), why.c_str());
  return std::nullopt;
}

// What the component table's measured side is: the pace stage's ranks, or the mean over all ranks.
void print_measured_ranks_note(const std::optional<StagedRun>& stages) {
  if (!stages) return;
  if (stages->pace) {
    std::printf("(measured: the mean over stage %lld's ranks, the stage the model prices slowest, whose compute, "
                "tp_comm and bubble the prediction is)\n",
                (long long)*stages->pace);
  } else if (!stages->comparison.times_known || !stages->comparison.ends_known) {
    std::printf("(measured: the mean over every stage's ranks: no stage's seconds are predicted, nor is which sets "
                "the pace; a faster stage computes less and waits longer)\n");
  } else {
    std::printf("(measured: the mean over every rank: the run recorded no rank of the stage the model prices "
                "slowest; a faster stage computes less and waits longer)\n");
  }
}

void report_one(const ReportOptions& o) {
  const Plan plan = read_predicted_plan(o.plans[0], o);
  const MeasuredRun run = read_run_for(o.runs[0], plan, o.plans[0], o);
  std::printf("%s: %s on %lld x %s, %s\n", o.plans[0].c_str(), plan.model.name.c_str(),
              (long long)plan.gpus, plan.machine.c_str(), fix_string(plan.config).c_str());
  std::printf("%s: %zu steps, %zu averaged%s\n\n", o.runs[0].c_str(), run.steps, run.steps_used,
              run.steps_used < run.steps ? " (the first is warm-up)" : "");
  std::optional<StagedRun> stages;
  if (plan.config.pipeline > 1) stages = stage_run(plan, run, stage_machine(o, plan));
  const Comparison comparison = compare(plan.predicted, stages ? stages->run : run);
  std::fputs(comparison_table(comparison).c_str(), stdout);
  print_measured_ranks_note(stages);
  print_shared_cores_note(o.runs[0], run);
  if (run.memory) {
    std::printf("\nDevice memory of the fullest rank (%zu) at its peak%s, against the memory model:\n",
                run.memory->rank, run.memory->offload ? ", with offload" : "");
    std::fputs(memory_comparison_table(compare_memory(predicted_memory(plan, run), *run.memory)).c_str(), stdout);
  }
  if (stages) {
    std::printf("\nPer pipeline stage: compute + tp_comm seconds per iteration, and the device memory of its fullest rank:\n");
    std::fputs(stage_comparison_table(stages->comparison).c_str(), stdout);
  }
  if (!o.csv.empty()) {
    write_comparison_csv(comparison, o.csv);
    std::printf("Wrote %s\n", o.csv.c_str());
  }
  if (!o.svg.empty()) {
    write_breakdown_plot(comparison, plan.model.name + " on " + std::to_string(plan.gpus) + " x " +
                                         plan.machine + ": predicted vs measured",
                         o.svg);
    std::printf("Wrote %s\n", o.svg.c_str());
  }
}

void report_many(const ReportOptions& o) {
  std::vector<RunSetEntry> entries;
  for (size_t i = 0; i < o.plans.size(); ++i) {
    const Plan plan = read_predicted_plan(o.plans[i], o);
    const MeasuredRun run = read_run_for(o.runs[i], plan, o.plans[i], o);
    entries.push_back({o.plans[i] + " vs " + o.runs[i], plan.predicted.iter_time, run.iteration_s});
  }
  const RunSetSummary summary = summarize_run_set(entries);
  std::fputs(run_set_text(summary).c_str(), stdout);
  if (!o.csv.empty()) {
    write_file_atomically(o.csv, run_set_csv(summary));
    std::printf("Wrote %s\n", o.csv.c_str());
  }
  if (!o.svg.empty()) {
    write_iteration_scatter(summary, o.svg);
    std::printf("Wrote %s\n", o.svg.c_str());
  }
}

// --csv and --svg never replace what the report reads, nor each other (before any work).
void reject_outputs_over_report_inputs(const ReportOptions& o) {
  std::vector<std::pair<std::string, std::string>> outputs;  // option, path
  for (const auto& [option, path] : {std::pair{"--csv", o.csv}, {"--svg", o.svg}}) {
    if (!path.empty()) outputs.emplace_back(option, path);
  }
  reject_shared_outputs(outputs);
  std::vector<std::pair<std::string, std::string>> inputs;  // what, path
  for (const std::string& plan : o.plans) inputs.emplace_back("a --plan file", plan);
  for (const std::string& run : o.runs) inputs.emplace_back("a --run file", run);
  add_preset_input(inputs, "the --machine file", "machines", o.machine);
  reject_outputs_over_inputs(outputs, inputs);
}

void run_report(ReportOptions o) {
  if (o.plans.size() != o.runs.size()) {
    throw InputError("--plan given " + std::to_string(o.plans.size()) + " times and --run " +
                     std::to_string(o.runs.size()) +
                     " times: give one --run per --plan, in pairs (--plan p1.yaml --run r1.json --plan p2.yaml --run r2.json)");
  }
  reject_repeated_inputs("--run", o.runs, "one run is one point of the comparison");
  reject_outputs_over_report_inputs(o);
  if (!o.machine.empty()) {
    o.given = load_machine(o.machine);
    std::fputs(partial_calibration_note(*o.given, o.machine).c_str(), stdout);
  }
  if (o.plans.size() == 1) {
    report_one(o);
  } else {
    report_many(o);
  }
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Compare a plan's predicted iteration with a run's measurement");
  cmd->add_option("--plan", options->plans, "plan.yaml written by axo plan --out (repeat, one per --run)")
      ->required();
  cmd->add_option("--run", options->runs, "run.json written by axo train --run (repeat, in the order of --plan)")
      ->required();
  cmd->add_option("--machine", options->machine,
                  "Cost the plans again on this profile (file or preset) instead of their stored predictions");
  cmd->add_option("--csv", options->csv, "Write the comparison as CSV")->check(output_path());
  cmd->add_option("--svg", options->svg, "Write a chart (PLplot SVG): stacked bars, or with several runs a scatter")
      ->check(output_path());
  cmd->callback([options] { run_report(*options); });
}

}  // namespace axo::tools
