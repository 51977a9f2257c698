// A Slurm batch script that runs `axo train` on a plan: one task per GPU,
// ranks packed node by node as the plan's rank order assumes.
//
// Sources (read for names and meaning): the Slurm sbatch and srun manual
// pages (slurm.schedmd.com/sbatch.html, srun.html): --nodes, --ntasks,
// --ntasks-per-node, --gpus-per-task, --gpu-bind=closest,
// --distribution=block (consecutive ranks fill a node before the next),
// --exclusive, --segment (with the block topology plugin: hosts kept in one
// block, an NVLink domain; slurm.schedmd.com/topology.html), and
// SLURM_CPUS_PER_TASK (set when --cpus-per-task is given).
//
// Why each setting: the cost model places a group inside a node when its
// ranks are consecutive there, so ranks must be packed node by node (block),
// and a node of several hosts must be one segment of one NVLink domain;
// it charges each node's NICs to this job's groups alone (exclusive); each
// rank drives one device (one GPU per task, bound to the closest one). The
// only environment set is OMP_NUM_THREADS, to the CPUs Slurm gives a task:
// otherwise every rank's OpenMP runtime starts a thread per core of the node,
// and the host-side work (the CPU optimizer with offload=on, the data loader)
// oversubscribes the node. Nothing NCCL-specific is set: the plan does not
// depend on a setting we could justify for every cluster.
#include <algorithm>
#include <cctype>
#include <string>

#include "model/error.h"
#include "planner/export.h"

namespace axo {

namespace {

std::string directive(const std::string& option) { return "#SBATCH " + option + "\n"; }

// The job's name from the model's: sbatch splits an #SBATCH line at blanks, so every character
// but letters, digits, '.', '_' and '-' becomes '-'.
std::string job_name(const std::string& model) {
  std::string name = "axo-" + model;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  }
  return name;
}

// Where axo's node is several hosts of one NVLink domain (gpus_per_host), Slurm's block topology
// keeps each `--segment` of hosts inside one domain (sbatch --segment; NVIDIA's GB200 NVL72
// scheduling guidance: segments of 16 trays for jobs of 128+ GPUs): a segment of a node's hosts,
// or of the whole job where it fits in one node. Slurm needs the job's hosts to be whole
// segments, so a job over several nodes whose last node is partial is refused. "" for one host a node.
std::string segment_directive(const MachineProfile& machine, int64_t ranks, int64_t hosts) {
  const int64_t hosts_per_node = machine.gpus_per_node / machine.host_gpus();
  if (hosts_per_node == 1 || hosts == 1) return "";
  if (hosts > hosts_per_node && hosts % hosts_per_node != 0) {
    throw InputError("Slurm cannot place this plan: its " + std::to_string(ranks) + " GPUs are " +
                     std::to_string(hosts) + " hosts of " + std::to_string(machine.host_gpus()) + ", not whole " +
                     std::to_string(hosts_per_node) + "-host nodes of " + machine.name + " (gpus_per_node " +
                     std::to_string(machine.gpus_per_node) + "), each of which --segment keeps in one NVLink "
                     "domain; plan a multiple of " + std::to_string(machine.gpus_per_node) + " GPUs, or at most " +
                     std::to_string(machine.gpus_per_node));
  }
  return directive("--segment=" + std::to_string(std::min(hosts, hosts_per_node)));
}

}  // namespace

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::string("/._-+=:,@%").find(ch) != std::string::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

std::string export_slurm(const TransformerSpec& spec, const MachineProfile& machine,
                         const ParallelConfig& c, const ExportContext& context) {
  const int64_t ranks = c.gpus();
  const int64_t per_host = std::min(ranks, machine.host_gpus());
  const int64_t hosts = (ranks + machine.host_gpus() - 1) / machine.host_gpus();
  const std::string segment = segment_directive(machine, ranks, hosts);
  const bool gpu = machine.backend != "cpu";

  std::string text = "#!/bin/bash\n# Slurm batch script: axo train, " + spec.name + " on " +
                     std::to_string(ranks) + (gpu ? " GPUs" : " ranks") + " of " + machine.name +
                     " (" + std::to_string(machine.gpus_per_node) + " per node), from axo plan.\n";
  if (!context.note.empty()) text += "# " + context.note + "\n";
  text += "# Submit: DATA='tokens/*.bin' sbatch this-script [more axo train options]\n"
          "# Ranks fill each node in turn (block) as the plan's rank order " +
          c.order_string() + " assumes,\n"
          "# and the job owns its nodes' links (exclusive), as the cost model charges them.\n";
  text += directive("--job-name=" + job_name(spec.name));
  text += directive("--nodes=" + std::to_string(hosts));
  text += directive("--ntasks=" + std::to_string(ranks));
  text += directive("--ntasks-per-node=" + std::to_string(per_host));
  text += segment;
  if (gpu) {
    text += directive("--gpus-per-task=1");
    text += directive("--gpu-bind=closest");
  }
  text += directive("--distribution=block:block");
  text += directive("--exclusive");
  text += "\nset -euo pipefail\n"
          ": \"${DATA:?set DATA to the training token files}\"\n"
          "AXO=${AXO:-axo}\n"
          "# One OpenMP thread per CPU Slurm gives a task (add --cpus-per-task to give more).\n"
          "export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}\n"
          "\n"
          "srun \"$AXO\" train --plan " + shell_word(context.plan_path) +
          " --data \"$DATA\" \"$@\"\n";
  return text;
}

}  // namespace axo
