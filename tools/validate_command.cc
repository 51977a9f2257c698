// `axo validate`: predicted against published iteration times, per point,
// with the mean and worst absolute error.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "model/presets.h"
#include "planner/validation.h"
#include "tools/commands.h"

namespace axo::tools {

namespace {

void run_validate(const std::vector<std::string>& files, const std::string& machine_override) {
  std::vector<std::string> sets = files;
  if (sets.empty()) {
    for (const auto& entry : std::filesystem::directory_iterator(config_dir() + "/validation")) {
      if (entry.path().extension() == ".yaml") sets.push_back(entry.path().string());
    }
    std::sort(sets.begin(), sets.end());
  }
  for (const std::string& path : sets) {
    const ValidationSet set = load_validation_set(path);
    const MachineProfile machine =
        load_machine(machine_override.empty() ? set.machine : machine_override);
    const auto results = run_validation(set, machine);
    std::printf("%s\nSource: %s\nMachine: %s (one profile for every point)\n\n", set.name.c_str(),
                set.source.c_str(), machine.name.c_str());
    std::printf("%-28s %6s %-20s %10s %10s %9s\n", "point", "GPUs", "quantity", "measured", "predicted", "error");
    double sum = 0, worst = 0;
    for (const ValidationResult& r : results) {
      std::printf("%-28s %6lld %-20s %10.3f %10.3f %+8.2f%%\n", r.point->name.c_str(),
                  (long long)r.point->gpus, r.quantity.c_str(), r.measured, r.predicted, r.error_pct);
      sum += std::fabs(r.error_pct);
      worst = std::max(worst, std::fabs(r.error_pct));
    }
    std::printf("\nmean |error| %.2f%%, worst |error| %.2f%% over %zu comparisons\n\n",
                sum / double(results.size()), worst, results.size());
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto machine = std::make_shared<std::string>();
  CLI::App* validate = app.add_subcommand("validate", "Compare predictions with published measurements");
  validate->add_option("--set", *files, "Validation set files (default: every set in configs/validation)")
      ->check(CLI::ExistingFile);
  validate->add_option("--machine", *machine, "Use this machine profile instead of the set's");
  validate->callback([files, machine] { run_validate(*files, *machine); });
}

}  // namespace axo::tools
