// `axo validate`: the cost model's predictions against published measurements.
//
// Two kinds of input become one list of entries, one per compared quantity:
//   - validation sets (configs/validation/*.yaml with `points`): hand-written
//     points of one publication on one machine preset (Korthikanti et al. 2022);
//   - the public corpus (public-runs.yaml + public-runs.csv, validation_corpus.h):
//     published runs of many sources, each on its cluster's preset.
// Every entry is costed on its own machine profile; predict() re-costs it on
// another one (same GPU type, other fitted figures: validation_fit.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"
#include "planner/validation_corpus.h"

namespace axo {

struct ValidationPoint {
  std::string name;
  std::string where;  // "FILE:LINE:COLUMN" of the point in its set file
  TransformerSpec model;
  int64_t gpus = 0;
  ParallelConfig config;
  // What was published: an iteration time, or one layer's forward and
  // backward time (ms, backward with recomputation), or both.
  double measured_s = 0;
  double measured_layer_forward_ms = 0;
  double measured_layer_backward_ms = 0;
  // The point's own training stack, where it differs from the set's (`stack:`).
  std::optional<StackSettings> stack;
};

struct ValidationSet {
  std::string name;
  std::string source;   // the publication
  std::string machine;  // the machine all points use: a preset's name, or a profile file (relative to the set's)
  std::string gpu;      // its GPU type, as the corpus names them (e.g. A100-80)
  std::optional<MachineProfile> profile;  // `machine` loaded, of type `gpu`; none where it did not load:
  std::string machine_problem;            //   why, at the set's line (a --machine may stand in)
  // The publication's training stack (`stack:`, every key the profile's `stack` takes, over
  // Megatron-LM's defaults); it replaces the preset's. A point's own replaces it in turn.
  std::optional<StackSettings> stack;
  std::vector<ValidationPoint> points;
};

// InputError (file, line, field) on a malformed set, two points of one name, or a machine of
// another GPU type than `gpu`.
ValidationSet load_validation_set(const std::string& path);
// The set's own profile; InputError (the machine field's line) where it did not load.
const MachineProfile& set_machine(const ValidationSet& set);

enum class Quantity { iteration_s, layer_forward_ms, layer_backward_ms };
const char* to_string(Quantity quantity);

// One compared quantity of one published run, or a run axo cannot express.
struct ValidationEntry {
  std::string name;
  std::string source;  // summary key: the corpus name prefix (dgxc, mpt, ...) or the set's file stem
  std::string group;   // leave-one-source-out key: the source up to its first '_'
  std::string gpu;     // GPU type
  std::string machine;
  std::string confidence = "exact-from-table";
  std::string why_not;  // empty when expressed
  Quantity quantity = Quantity::iteration_s;
  std::string measured_from;  // iter_time_s, tokens_per_s, or the set's file
  double measured = 0, predicted = 0, error_pct = 0;
  // Memory on the fullest device against what the GPU offers.
  double memory_GiB = 0, usable_GiB = 0;
  bool fits = true;
  std::string memory_caveat;
  std::vector<std::string> notes;
  // What the prediction is made of.
  TransformerSpec model;
  ParallelConfig config;
  MachineProfile profile;

  bool expressed() const { return why_not.empty(); }
};

// The entries of a set costed on `machine` (its preset, or `other_profile`: --machine's, which
// labels the GPU type "A100-80 on NAME" apart from that GPU's own runs); `source` is the set's
// file stem. Throws InputError when a point's configuration does not fit its model.
std::vector<ValidationEntry> validate_set(const ValidationSet& set, const MachineProfile& machine,
                                          const std::string& source, bool other_profile = false);
// The corpus's cases costed on their presets; a configuration the cost model
// refuses becomes an unexpressed entry with its reason.
std::vector<ValidationEntry> validate_corpus(const std::vector<CorpusCase>& cases);

// The entry's quantity predicted with `profile` (its own, or a refitted one).
double predict(const ValidationEntry& entry, const MachineProfile& profile);

}  // namespace axo
