// `axo models` and `axo machines`: list the presets with their key figures.
#include <algorithm>
#include <cstdio>

#include "model/error.h"
#include "model/presets.h"
#include "tools/commands.h"

namespace axo::tools {

namespace {

// The presets of `kind`; none is a mistake in where they are looked for (an empty table said nothing).
std::vector<std::string> preset_names(const std::string& kind) {
  std::vector<std::string> names = list_presets(kind);
  if (names.empty()) {
    throw InputError("no " + kind.substr(0, kind.size() - 1) + " presets in " + config_dir() + "/" + kind +
                     " (the folder comes from AXO_CONFIG_DIR, else the source tree's configs/)");
  }
  return names;
}

}  // namespace

void add_models_command(CLI::App& app) {
  CLI::App* models = app.add_subcommand("models", "List the model presets");
  models->callback([] {
    const std::vector<std::string> names = preset_names("models");
    std::printf("%-20s %10s %6s %6s %5s %4s %7s %5s %7s %6s %-6s\n", "name", "params", "layers",
                "hidden", "heads", "kv", "ffn", "seq", "vocab", "batch", "mlp");
    for (const std::string& name : names) {
      const TransformerSpec s = load_model(name);
      std::printf("%-20s %10s %6lld %6lld %5lld %4lld %7lld %5lld %7lld %6lld %-6s\n", name.c_str(),
                  parameter_count_text(s.parameter_count()).c_str(), (long long)s.layers, (long long)s.hidden,
                  (long long)s.heads, (long long)s.kv_heads, (long long)s.ffn_hidden,
                  (long long)s.seq_len, (long long)s.vocab, (long long)s.global_batch, to_string(s.mlp));
    }
  });
}

void add_machines_command(CLI::App& app) {
  CLI::App* machines = app.add_subcommand("machines", "List the machine presets");
  machines->callback([] {
    const std::vector<std::string> names = preset_names("machines");
    int width = 4;  // the longest name's, so that the columns stay in line
    for (const std::string& name : names) width = std::max(width, int(name.size()));
    std::printf("%-*s %9s %8s %10s %9s %11s %11s\n", width, "name", "gpus/node", "mem_GiB", "bf16_TF/s",
                "HBM_GB/s", "intra_GB/s", "NIC_GB/s");
    for (const std::string& name : names) {
      const MachineProfile m = load_machine(name);
      char bf16[32] = "-";  // no bf16 rate (V100)
      if (m.peak_tflops_bf16 > 0) std::snprintf(bf16, sizeof bf16, "%.1f", m.peak_tflops_bf16);
      std::printf("%-*s %9lld %8.0f %10s %9.0f %11.0f %5lldx%-5.0f\n", width, name.c_str(),
                  (long long)m.gpus_per_node, m.device_memory_GiB, bf16,
                  m.hbm_bandwidth_GBps, m.intra_bus_bandwidth_GBps, (long long)m.nics_per_node,
                  m.nic_bandwidth_GBps);
    }
  });
}

}  // namespace axo::tools
