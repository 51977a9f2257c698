// `axo validate`: predicted against published measurements. The validation
// sets (Korthikanti et al. 2022) point by point, then the public corpus: per
// source and GPU type the count, mean |error|, worst and signed bias; the runs
// axo cannot express and why; the runs the memory model says do not fit.
// --csv writes every entry; --fit fits each GPU type's efficiencies and
// reports leave-one-source-out errors and the error band; --explain NAME
// prints where one run's predicted time goes, cost by cost.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "model/atomic_file.h"
#include "model/csv_text.h"
#include "model/error.h"
#include "model/presets.h"
#include "model/yaml_fields.h"
#include "planner/explain.h"
#include "planner/validation.h"
#include "planner/validation_fit.h"
#include "planner/validation_inputs.h"
#include "planner/validation_summary.h"
#include "tools/commands.h"
#include "tools/output_path.h"

namespace axo::tools {

namespace {

struct ValidateOptions {
  std::vector<std::string> sets;  // default: every set in configs/validation
  std::string corpus;             // default: configs/validation/public-runs.yaml
  std::string machine;            // overrides the sets' machine
  std::string csv;
  bool fit = false;
  std::string explain;  // a point or corpus row's name
};

void print_set(const ValidationSet& set, const std::vector<ValidationEntry>& entries) {
  std::printf("%s\nSource: %s\nMachine: %s (one profile for every point)\n\n", set.name.c_str(),
              set.source.c_str(), entries.front().machine.c_str());
  std::printf("%-28s %6s %-20s %10s %10s %9s\n", "point", "GPUs", "quantity", "measured", "predicted", "error");
  std::vector<double> errors;
  for (const ValidationEntry& e : entries) {
    std::printf("%-28s %6lld %-20s %10.3f %10.3f %+8.2f%%\n", e.name.c_str(), (long long)e.config.gpus(),
                to_string(e.quantity), e.measured, e.predicted, e.error_pct);
    errors.push_back(e.error_pct);
  }
  const ErrorStats s = error_stats(errors);
  std::printf("\nmean |error| %.2f%%, worst %+.2f%%, bias %+.2f%% over %d comparison%s\n\n", s.mean_abs_pct,
              s.worst_pct, s.bias_pct, s.count, s.count == 1 ? "" : "s");
}

std::string csv_text(const std::vector<ValidationEntry>& entries) {
  std::string out = csv_line({"name", "source", "gpu_type", "machine", "quantity", "predicted", "measured",
                              "measured_from", "error_pct", "memory_GiB", "usable_GiB", "fits", "confidence",
                              "expressed", "why_not", "notes"});
  for (const ValidationEntry& e : entries) {
    std::string notes;
    for (const std::string& note : e.notes) notes += (notes.empty() ? "" : "; ") + note;
    if (!e.memory_caveat.empty()) notes += (notes.empty() ? "memory: " : "; memory: ") + e.memory_caveat;
    const bool x = e.expressed();
    auto number = [x](double v) { return x ? csv_number(v) : std::string(); };
    out += csv_line({e.name, e.source, e.gpu, e.machine, to_string(e.quantity), number(e.predicted),
                     csv_number(e.measured), e.measured_from, number(e.error_pct), number(e.memory_GiB),
                     number(e.usable_GiB), x ? (e.fits ? "true" : "false") : "", e.confidence,
                     x ? "true" : "false", e.why_not, notes});
  }
  return out;
}

// The sets and the corpus not named on the command line: configs/validation's.
void find_inputs(ValidateOptions& options) {
  if (!options.sets.empty() && !options.corpus.empty()) return;
  const std::string folder = config_dir() + "/validation";
  ValidationInputs found;
  try {
    found = find_validation_inputs(folder);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + ": name the sets and the corpus with --set and --corpus");
  }
  if (options.sets.empty()) options.sets = found.sets;
  if (options.corpus.empty()) options.corpus = found.corpus;
  if (options.corpus.empty()) {
    throw InputError(folder + ": no corpus (a YAML file with `corpus:`, public-runs.yaml): name one with --corpus");
  }
}

// The named point's or row's prediction, cost by cost, after each quantity it was compared on
// (a layer's forward and backward); an unknown, ambiguous or unexpressed name is a usage error.
void print_explanation(const std::vector<ValidationEntry>& entries, const std::string& name) {
  std::vector<const ValidationEntry*> named;
  for (const ValidationEntry& e : entries) {
    if (e.name != name) continue;
    if (!named.empty() && named.front()->source != e.source) {
      throw InputError("validate --explain: '" + name + "' names points of " + named.front()->source + " and " +
                       e.source + ": rename one (the corpus is always read; give the one set with --set)");
    }
    named.push_back(&e);
  }
  if (named.empty()) throw InputError("validate --explain: no validation point or corpus row is named '" + name + "'");
  const ValidationEntry& first = *named.front();
  if (!first.expressed()) throw InputError("validate --explain: '" + name + "' is not expressible: " + first.why_not);
  // A set priced on --machine is labelled "A100-80 on X" already.
  const bool labelled = first.gpu.ends_with(" on " + first.machine);
  std::printf("%s (%s, %s%s%s):", first.name.c_str(), first.source.c_str(), first.gpu.c_str(), labelled ? "" : " on ",
              labelled ? "" : first.machine.c_str());
  for (const ValidationEntry* e : named) {
    std::printf("%s %s measured %.4g, predicted %.4g (%+.1f%%)", e == named.front() ? "" : ";", to_string(e->quantity),
                e->measured, e->predicted, e->error_pct);
  }
  std::printf("\n\n%s\n", explain_text(CostModel(first.model, first.profile), first.config).c_str());
}

// Whether --machine names the set's own profile (which prices it as its preset does); a set whose
// profile is not found is priced on --machine's alone.
bool same_profile(const std::string& given, const std::string& sets) {
  try {
    return same_file(resolve_preset("machines", given), resolve_preset("machines", sets));
  } catch (const InputError&) {
    return false;
  }
}

// The set's entries priced on `machine`; a point it cannot price names --machine's file where that
// priced it (the message names the profile by its name alone).
std::vector<ValidationEntry> set_on_machine(const ValidationSet& set, const MachineProfile& machine,
                                            const std::string& path, const std::string& given, bool other) {
  try {
    return validate_set(set, machine, std::filesystem::path(path).stem().string(), other);
  } catch (const InputError& e) {
    if (given.empty()) throw;
    throw InputError(std::string(e.what()) + " (priced on --machine " + given + ")");
  }
}

// --csv replaces none of what the command reads: the corpus, its table, the sets, and the machine
// profiles they and --machine name (a preset's file too: `--csv configs/machines/selene.yaml`).
void reject_csv_over_inputs(const ValidateOptions& options, const std::vector<ValidationSet>& sets,
                            const std::vector<CorpusCase>& cases) {
  std::vector<std::pair<std::string, std::string>> inputs{
      {"the corpus", options.corpus}, {"the corpus's table", corpus_table_path(options.corpus)}};
  for (const std::string& set : options.sets) inputs.emplace_back("a validation set", set);
  add_preset_input(inputs, "the --machine file", "machines", options.machine);
  for (const ValidationSet& set : sets) add_preset_input(inputs, "a validation set's machine", "machines", set.machine);
  std::set<std::string> corpus_machines;
  for (const CorpusCase& c : cases) corpus_machines.insert(c.machine);
  for (const std::string& name : corpus_machines) add_preset_input(inputs, "a published run's machine", "machines", name);
  reject_outputs_over_inputs({{"--csv", options.csv}}, inputs);
}

void run_validate(ValidateOptions options) {
  find_inputs(options);
  reject_repeated_inputs("--set", options.sets, "its runs would count twice");
  // Every input read, and its mistakes told, before any output.
  const std::vector<CorpusCase> cases = load_corpus(options.corpus);
  reject_sets_named_as_corpus_sources(options.sets, cases);
  std::vector<ValidationSet> sets;
  for (const std::string& path : options.sets) sets.push_back(load_validation_set(path));
  reject_csv_over_inputs(options, sets, cases);
  std::vector<ValidationEntry> entries;
  const std::optional<MachineProfile> given =
      options.machine.empty() ? std::nullopt : std::optional<MachineProfile>(load_machine(options.machine));
  for (size_t i = 0; i < sets.size(); ++i) {
    const ValidationSet& set = sets[i];
    const MachineProfile machine = given ? *given : set_machine(set);
    const bool other = given && !same_profile(options.machine, set.machine);
    const auto set_entries = set_on_machine(set, machine, options.sets[i], given ? options.machine : "", other);
    if (options.explain.empty()) print_set(set, set_entries);
    entries.insert(entries.end(), set_entries.begin(), set_entries.end());
  }
  if (!options.machine.empty() && options.explain.empty()) {
    std::printf("--machine %s prices the validation sets above; the published runs below keep their clusters'\n"
                "presets (%s)\n%s\n", options.machine.c_str(), options.corpus.c_str(),
                partial_calibration_note(*given, options.machine).c_str());
  }
  const auto corpus = validate_corpus(cases);
  entries.insert(entries.end(), corpus.begin(), corpus.end());
  if (!options.explain.empty()) return print_explanation(entries, options.explain);
  const auto expressed = std::count_if(corpus.begin(), corpus.end(), [](const auto& e) { return e.expressed(); });
  std::printf("Published runs (%s): %ld of %zu expressed; error = (predicted - measured) / measured\n"
              "of the iteration time (positive: predicted too slow)\n\n%s\n",
              options.corpus.c_str(), long(expressed), corpus.size(), summary_table(summarize(entries)).c_str());
  if (size_t(expressed) == corpus.size()) {
    std::printf("Every published run is expressed.\n\n");
  } else {
    std::printf("Not expressible yet (%zu runs):\n%s\n", corpus.size() - size_t(expressed),
                unexpressed_list(corpus).c_str());
  }
  const std::string misses = memory_misses(entries);
  std::printf("Published runs the memory model says do not fit (each a model error; a set's per-layer\n"
              "timings are of one layer, not runs, and the CSV's `fits` gives every point's):\n%s\n",
              misses.empty() ? "  none\n" : misses.c_str());
  if (!options.csv.empty()) write_file_atomically(options.csv, csv_text(entries));
  if (options.fit) {
    std::printf("Fitted per GPU type, with leave-one-source-out (LOSO) errors; a band is where the measured\n"
                "time fell about the prediction, (measured - predicted) / predicted, as plan's low_s and high_s:\n\n%s",
                fit_table(fit_by_gpu(entries)).c_str());
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* validate = app.add_subcommand("validate", "Compare predictions with published measurements");
  validate->add_option("--set", options->sets, "Validation set files (default: every set in configs/validation)")
      ->check(CLI::ExistingFile);
  validate->add_option("--corpus", options->corpus,
                       "Published-runs corpus description (default: configs/validation/public-runs.yaml)")
      ->check(CLI::ExistingFile);
  CLI::Option* machine = validate->add_option(
      "--machine", options->machine,
      "Use this machine profile instead of each validation set's (the published runs keep their clusters' presets: "
      "public-runs.yaml)")->check(non_empty("names no machine"));
  CLI::Option* csv =
      validate->add_option("--csv", options->csv, "Write every compared run (expressed or not) to this CSV file")
          ->check(output_path());
  // A fit groups runs by the GPU they ran on, priced on their own presets: another profile's
  // prices would be fitted to another GPU's measurements.
  CLI::Option* fit = validate
                         ->add_flag("--fit", options->fit,
                                    "Fit each GPU type's GEMM and memory-bound efficiencies; report "
                                    "leave-one-source-out errors")
                         ->excludes(machine);
  validate
      ->add_option("--explain", options->explain,
                   "Explain one validation point's or corpus row's prediction, cost by cost (its name)")
      ->check(non_empty("names no run"))
      ->excludes(csv)
      ->excludes(fit);
  validate->callback([options] { run_validate(*options); });
}

}  // namespace axo::tools
