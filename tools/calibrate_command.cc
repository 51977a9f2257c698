// `axo calibrate`: under mpirun, measure this machine and write a profile;
// or, with --refine, fit an existing profile's efficiency factors to runs
// (no MPI, no measurement: report/profile_refinement.h).
#include <mpi.h>

#include <algorithm>

#include "calibrate/calibration.h"
#include "executor/comm/mpi_communicator.h"
#include "model/comma_list.h"
#include "model/error.h"
#include "model/machine_profile.h"
#include "model/plan_file.h"
#include "model/presets.h"
#include "model/yaml_fields.h"
#include "report/profile_refinement.h"
#include "report/refined_profile_file.h"
#include "report/refinement_text.h"
#include "report/stage_comparison.h"
#include "tools/commands.h"
#include "tools/output_path.h"

namespace axo::tools {

namespace {

struct CalibrateArguments {
  calibration::CalibrationOptions options;
  std::string ops, model, fault;
  // --refine: the runs, their plans (same order) and the profile to refine.
  std::vector<std::string> refine_runs, refine_plans;
  std::string machine;
};

std::vector<CollectiveOp> parse_ops(const std::string& text) {
  std::vector<CollectiveOp> ops;
  for (const std::string& item : comma_list(text, "--ops")) {
    const CollectiveOp op = parse_collective_op(item, "--ops");
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);  // each measured once
  }
  if (ops.empty()) throw InputError("--ops: expected a list such as all_reduce,all_gather");
  return ops;
}

calibration::FaultInjection parse_fault(const std::string& text) {
  calibration::FaultInjection fault;
  if (text.empty()) return fault;
  if (text == "corrupt") {
    fault.corrupt = true;
  } else if (text.rfind("hang:", 0) == 0) {
    size_t used = 0;
    try {
      fault.hang_rank = std::stoi(text.substr(5), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() - 5 || fault.hang_rank < 0) {
      throw InputError("--inject-fault: expected corrupt or hang:RANK, got '" + text + "'");
    }
  } else {
    throw InputError("--inject-fault: expected corrupt or hang:RANK, got '" + text + "'");
  }
  return fault;
}

// --out never replaces what the command reads: the runs, plans and profile of --refine, the
// --model whose GEMM shapes a calibration times (before any work).
void reject_out_over_inputs(const CalibrateArguments& a) {
  std::vector<std::pair<std::string, std::string>> inputs;  // what, path
  for (const std::string& run : a.refine_runs) inputs.emplace_back("a --refine run", run);
  for (const std::string& plan : a.refine_plans) inputs.emplace_back("a --plan file", plan);
  add_preset_input(inputs, "the --machine file", "machines", a.machine);
  add_preset_input(inputs, "the --model file", "models", a.model);
  reject_outputs_over_inputs({{"--out", a.options.out}}, inputs);
}

void refine(const CalibrateArguments& a) {
  if (a.refine_plans.size() != a.refine_runs.size()) {
    throw InputError("--refine: " + std::to_string(a.refine_runs.size()) + " run(s) but " +
                     std::to_string(a.refine_plans.size()) +
                     " --plan: give the plan.yaml of each run, in the same order");
  }
  if (a.machine.empty()) throw InputError("--refine needs --machine PROFILE: the profile to refine");
  reject_repeated_inputs("--refine", a.refine_runs, "the fit would weigh it twice");
  reject_out_over_inputs(a);
  const std::string profile_path = resolve_preset("machines", a.machine);
  const YAML::Node original = load_yaml_file(profile_path);
  const MachineProfile profile = machine_profile_from_yaml(original, profile_path);
  if (const std::string why = unmeasured_rates_problem(profile, a.machine); !why.empty()) throw InputError(why);
  std::vector<RefinementCase> cases;
  for (size_t i = 0; i < a.refine_runs.size(); ++i) {
    const Plan plan = read_plan_file(a.refine_plans[i]);
    MeasuredRun run = read_run_of(a.refine_runs[i], plan, a.refine_plans[i]);
    if (const std::string why = backend_mismatch(run, profile, a.machine); !why.empty()) {
      throw InputError(why + ": refine the profile of the machine it ran on");
    }
    // A pipeline's predicted compute, tp_comm and bubble are its slowest stage's: fit that stage's ranks.
    if (plan.config.pipeline > 1) run = stage_run(plan, run, profile).run;
    cases.push_back({a.refine_runs[i], plan, std::move(run)});
  }
  const RefinementResult result = refine_profile(profile, cases);
  std::printf("Refining %s against %zu run(s): each plan costed again, its components fitted to the run\n",
              profile.name.c_str(), cases.size());
  std::fputs(partial_calibration_note(profile, a.machine).c_str(), stdout);
  std::fputs(refinement_text(result, profile, a.refine_runs).c_str(), stdout);
  write_refined_profile(result, original, a.refine_runs, a.options.out);
  std::printf("Wrote %s\n", a.options.out.c_str());
}

void run(CalibrateArguments& a) {
  if (!a.refine_runs.empty()) return refine(a);
  if (!a.refine_plans.empty() || !a.machine.empty()) {
    throw InputError("--plan and --machine go with --refine RUN.json ...");
  }
  if (!is_one_printable_line(a.options.name)) {
    throw InputError(std::string("--name: ") + kNotOnePrintableLine);
  }
  // A plan records its machine by name: a profile named as a preset would be priced as that preset
  // (axo report --machine resolves the name to the preset's file).
  if (const auto presets = list_presets("machines");
      std::find(presets.begin(), presets.end(), a.options.name) != presets.end()) {
    throw InputError("--name " + a.options.name + ": a machine preset has that name; give the calibrated "
                     "profile its own, so that its plans are not taken for the preset's");
  }
  MpiSession session(nullptr, nullptr);
  if (!a.ops.empty()) a.options.ops = parse_ops(a.ops);
  if (!a.model.empty()) a.options.extra_gemms = calibration::model_gemm_shapes(load_model(a.model));
  a.options.fault = parse_fault(a.fault);
  if (a.options.out.empty()) throw InputError("--out is required");
  reject_out_over_inputs(a);
  const MachineProfile profile = calibration::run_calibration(a.options);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("\nWrote %s: %s, %lld ranks per node, GEMM best fp32 %.3f, bf16 %.3f TFLOP/s, copy %.1f GB/s, "
                "intra-node all-reduce %.2f GB/s bus, %zu collective fits\n",
                a.options.out.c_str(), profile.name.c_str(), (long long)profile.gpus_per_node,
                profile.peak_tflops_fp32, profile.peak_tflops_bf16, profile.hbm_bandwidth_GBps,
                profile.intra_bus_bandwidth_GBps, profile.collectives.size());
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArguments>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Measure this machine under mpirun and write a machine profile, or --refine one against runs");
  cmd->add_option("--out", a->options.out, "Profile to write (YAML)")->required()->check(output_path());
  const std::vector<CLI::Option*> measuring = {
      cmd->add_option("--name", a->options.name, "Profile name (default calibrated-<host>)")
          ->check(non_empty("names no profile")),
      cmd->add_flag("--quick", a->options.quick, "A short sweep (messages up to 4 MiB, a smaller GEMM grid)"),
      cmd->add_option("--ops", a->ops, "Collectives: all_reduce,all_gather,reduce_scatter,broadcast,send_recv")
          ->check(non_empty("names no collective")),
      cmd->add_option("--min-bytes", a->options.min_bytes, "Smallest message (bytes)")->check(positive()),
      cmd->add_option("--max-bytes", a->options.max_bytes, "Largest message (bytes)")->check(positive()),
      cmd->add_option("--iters", a->options.iterations, "Iterations at 1 MiB (scaled for other sizes; at most 10^6)")
          ->check(whole_number_in(1, 1000000)),
      cmd->add_option("--ranks-per-node", a->options.ranks_per_node, "Pretend nodes of N ranks (default: from the launcher)")->check(positive()),
      cmd->add_option("--model", a->model, "Also time this model's layer GEMM shapes"),
      cmd->add_option("--timeout", a->options.timeout_s, "Seconds one measurement may take before calibration stops")->check(positive()),
      cmd->add_option("--inject-fault", a->fault, "Testing only: corrupt (a wrong result) or hang:RANK")};
  CLI::Option* refine_runs = cmd->add_option(
      "--refine", a->refine_runs,
      "Measure nothing: fit the --machine profile's efficiency factors (GEMM, memory-bound, network, host) "
      "to these run.json files and write the refined profile to --out");
  cmd->add_option("--plan", a->refine_plans, "With --refine: the plan.yaml of each run, in the same order");
  cmd->add_option("--machine", a->machine, "With --refine: the profile to refine (preset name or file)");
  for (CLI::Option* option : measuring) refine_runs->excludes(option);
  cmd->callback([a] { run(*a); });
}

}  // namespace axo::tools
