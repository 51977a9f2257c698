// The public validation corpus (configs/validation/public-runs.csv, read through
// public-runs.yaml): each published run turned into the model, configuration and
// machine axo would cost it with, or the reason axo cannot express it yet.
//
// Translation (README.md in configs/validation says why each rule holds):
//   model     the row's shape columns + its family's architecture (public-runs.yaml);
//             precision fp8 when the row's says fp8 or float8 (Transformer
//             Engine, torchtitan's float8 linears), else bf16
//   grid      Megatron/NeMo rows: data = DP, y = TP (x = z = 1), pipeline = PP,
//             context = the CP the row states (DP counts replicas without it);
//             FSDP rows (MosaicML FULL_SHARD, torchtitan FSDP2): z = DP, data = 1 —
//             AxoNN's Z shards weights, gradients and optimizer state and gathers
//             weights per layer, which is FSDP's FULL_SHARD (ARCHITECTURE.md);
//             FSDP SHARD_GRAD_OP (MosaicML's H100 rows): data = DP, zero = 2 —
//             whole weights, gradients and optimizer state sharded over the data group;
//             FSDP under torchtitan's pipeline: data = DP, zero = 1 — weights gathered
//             and gradients reduced once per iteration, after the backward
//   microbatch sequences per microbatch per replica: the row's microbatch, times z;
//             under torchtitan's pipeline the row's local batch over the recipe's
//             pipeline_microbatches
//   interleave the row's VP; recompute and sequence parallelism as the row states
//             (torchtitan's TP is always sequence-parallel, also beside FSDP's z;
//             its per-layer checkpointing is full recompute of half of each chunk's
//             layers, recompute_layers)
//   measured   iter_time_s where given, else global_batch·seq_len / tokens_per_s
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

// One published run as axo expresses it.
struct CorpusCase {
  std::string name;
  std::string source;      // the name's prefix: dgxc, mpt, torchtitan
  std::string gpu_type;    // the row's own words, e.g. "H100-80 (DGX H100)"
  std::string gpu;         // the GPU type fits and summaries group by, e.g. H100-80
  std::string confidence;  // exact-from-table or partial
  std::string where;       // FILE:LINE
  // Empty when expressed; otherwise why axo cannot cost it (yet).
  std::string why_not;
  std::string machine;  // preset name
  // The source's stack (public-runs.yaml machines; eager stacks fused under torch.compile), with the
  // recipe's optimizer state (recipes:).
  StackSettings stack;
  int64_t gpus = 0;
  TransformerSpec model;
  ParallelConfig config;
  double measured_s = 0;      // iteration time
  std::string measured_from;  // "iter_time_s" or "tokens_per_s"
  // What the translation leaves out that changes memory but not (to first
  // order) time, e.g. Megatron's distributed optimizer.
  std::string memory_caveat;
  // Smaller liberties the translation takes (reported in the CSV).
  std::vector<std::string> notes;

  bool expressed() const { return why_not.empty(); }
};

// Reads the corpus description (public-runs.yaml) and the CSV it names (a path
// relative to the YAML file) into one case per row, expressed or not.
std::vector<CorpusCase> load_corpus(const std::string& yaml_path);
// The CSV file the corpus description names.
std::string corpus_table_path(const std::string& yaml_path);
// The source a name belongs to: its first word, up to '_' (a corpus row's "mpt_7b_..." is mpt's; a
// set file's "korthikanti2022_table5" is grouped with _table4 as one source).
std::string source_of(const std::string& name);

// A CSV record: its place in its file ("runs.csv:7", the line it ends on) and
// its cells by column name (header → cell).
struct CorpusRecord {
  std::string where;
  std::vector<std::pair<std::string, std::string>> cells;
};
// Reads a CSV file into records; malformed CSV is an InputError with the byte.
std::vector<CorpusRecord> read_csv_records(const std::string& path);

}  // namespace axo
