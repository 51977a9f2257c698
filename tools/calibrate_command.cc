// `axo calibrate`: under mpirun, measure this machine and write a profile.
#include <mpi.h>

#include <sstream>

#include "calibrate/calibration.h"
#include "executor/comm/mpi_communicator.h"
#include "model/error.h"
#include "model/presets.h"
#include "tools/commands.h"

namespace axo::tools {

namespace {

struct CalibrateArguments {
  calibration::CalibrationOptions options;
  std::string ops, model, fault;
};

std::vector<CollectiveOp> parse_ops(const std::string& text) {
  std::vector<CollectiveOp> ops;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (!item.empty()) ops.push_back(parse_collective_op(item, "--ops"));
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
    try {
      fault.hang_rank = std::stoi(text.substr(5));
    } catch (const std::exception&) {
      throw InputError("--inject-fault: expected corrupt or hang:RANK, got '" + text + "'");
    }
  } else {
    throw InputError("--inject-fault: expected corrupt or hang:RANK, got '" + text + "'");
  }
  return fault;
}

void run(CalibrateArguments& a) {
  MpiSession session(nullptr, nullptr);
  if (!a.ops.empty()) a.options.ops = parse_ops(a.ops);
  if (!a.model.empty()) a.options.extra_gemms = calibration::model_gemm_shapes(load_model(a.model));
  a.options.fault = parse_fault(a.fault);
  if (a.options.out.empty()) throw InputError("--out is required");
  const MachineProfile profile = calibration::run_calibration(a.options);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("\nWrote %s: %s, %lld ranks per node, GEMM %.3f TFLOP/s best, copy %.1f GB/s, "
                "intra-node all-reduce %.2f GB/s bus, %zu collective fits\n",
                a.options.out.c_str(), profile.name.c_str(), (long long)profile.gpus_per_node,
                profile.peak_tflops_fp32, profile.hbm_bandwidth_GBps, profile.intra_bus_bandwidth_GBps,
                profile.collectives.size());
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArguments>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Measure this machine under mpirun and write a machine profile");
  cmd->add_option("--out", a->options.out, "Profile to write (YAML)")->required();
  cmd->add_option("--name", a->options.name, "Profile name (default calibrated-<host>)");
  cmd->add_flag("--quick", a->options.quick, "A short sweep (messages up to 4 MiB, a smaller GEMM grid)");
  cmd->add_option("--ops", a->ops, "Collectives: all_reduce,all_gather,reduce_scatter,broadcast,send_recv");
  cmd->add_option("--min-bytes", a->options.min_bytes, "Smallest message (bytes)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-bytes", a->options.max_bytes, "Largest message (bytes)")->check(CLI::PositiveNumber);
  cmd->add_option("--iters", a->options.iterations, "Iterations at 1 MiB (scaled for other sizes)")->check(CLI::PositiveNumber);
  cmd->add_option("--ranks-per-node", a->options.ranks_per_node, "Pretend nodes of N ranks (default: from the launcher)")->check(CLI::PositiveNumber);
  cmd->add_option("--model", a->model, "Also time this model's layer GEMM shapes");
  cmd->add_option("--timeout", a->options.timeout_s, "Seconds one measurement may take before calibration stops")->check(CLI::PositiveNumber);
  cmd->add_option("--inject-fault", a->fault, "Testing only: corrupt (a wrong result) or hang:RANK");
  cmd->callback([a] { run(*a); });
}

}  // namespace axo::tools
