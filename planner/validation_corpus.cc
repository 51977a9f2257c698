// The public validation corpus: CSV rows to costable cases (see validation_corpus.h).
#include "planner/validation_corpus.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <map>
#include <stdexcept>

#include "model/config_fields.h"
#include "model/csv_text.h"
#include "model/error.h"
#include "model/input_file.h"
#include "model/presets.h"
#include "model/yaml_fields.h"

namespace axo {

namespace {

// The architecture of a model family, as a YAML mapping of TransformerSpec keys.
struct Family {
  std::string match;
  YAML::Node fields;
};

struct MachineEntry {
  std::string source, gpu_type, gpu, machine;
  StackSettings stack;  // the optimizer state is a recipe's (recipes:), not a machine entry's
  int64_t gpus_per_host = 0;  // the preset's (a row's gpus_per_node is one server's)
};

// A machine entry, its `machine` a preset whose GPU type is the entry's `gpu`.
MachineEntry read_machine_entry(const YamlMap& entry, const std::string& path) {
  if (entry.has("optimizer_state")) {
    entry.fail("optimizer_state", "unknown field in the machine entry (a recipe's setting: recipes:)");
  }
  MachineEntry m{entry.get_string("source"), entry.get_string("gpu_type"), entry.get_string("gpu"),
                 entry.get_string("machine"), read_stack_settings(entry, path)};
  entry.reject_unknown_keys();
  MachineProfile preset;
  try {
    preset = load_machine(m.machine);
  } catch (const InputError& e) {
    entry.fail("machine", e.what());
  }
  if (preset.gpu_type != m.gpu) {
    entry.fail("gpu", "'" + m.gpu + "' is not machine " + m.machine + "'s GPU type, '" + preset.gpu_type +
                          "': the runs would be grouped and banded as another GPU's");
  }
  m.gpus_per_host = preset.host_gpus();
  return m;
}

// Settings of the recipe some rows ran (the rows whose `source` cell contains `source_contains`):
// the optimizer state, the recompute / sequence_parallel cells a row leaves "not stated"
// (empty when the recipe entry does not set them), and the pipeline microbatches per iteration
// no row states (0: not set).
struct RecipeEntry {
  std::string source_contains;
  OptimizerState optimizer_state = OptimizerState::fp32;
  std::string recompute, sequence_parallel;
  std::optional<AttentionKind> attention;  // the attention kernel the recipe selected, over the machine entry's
  int64_t pipeline_microbatches = 0;
};

RecipeEntry read_recipe_entry(const YamlMap& entry) {
  RecipeEntry recipe{entry.get_string("source_contains"), OptimizerState::fp32, "", "", std::nullopt, 0};
  if (entry.has("optimizer_state")) recipe.optimizer_state = parse_optimizer_state(entry);
  if (entry.has("pipeline_microbatches")) recipe.pipeline_microbatches = entry.get_int("pipeline_microbatches", 1, 1 << 20);
  if (entry.has("attention")) recipe.attention = parse_attention(entry, "recipe entry");
  if (entry.has("recompute")) recipe.recompute = entry.get_choice("recompute", {"none", "selective", "full"});
  if (entry.has("sequence_parallel")) {
    recipe.sequence_parallel = entry.get_choice("sequence_parallel", {"yes", "no"});
  }
  entry.reject_unknown_keys();
  return recipe;
}

struct CorpusSpec {
  std::string csv_path;
  std::vector<Family> families;
  std::vector<MachineEntry> machines;
  std::vector<RecipeEntry> recipes;
};

CorpusSpec load_corpus_spec(const std::string& path) {
  const YamlMap map(load_yaml_file(path), path, "validation corpus");
  CorpusSpec spec;
  spec.csv_path = (std::filesystem::path(path).parent_path() / map.get_string("corpus")).string();
  if (std::error_code error; !std::filesystem::is_regular_file(spec.csv_path, error)) {  // named where it is named
    map.fail("corpus", spec.csv_path + (std::filesystem::is_directory(spec.csv_path, error) ? " is a folder, not the table"
                                                                                          : " does not exist") +
                           " (the table, relative to this file's folder)");
  }
  for (const YAML::Node& node : map.get_node("families")) {
    const YamlMap family(node, path, "model family");
    Family f{family.get_string("match"), YAML::Node(YAML::NodeType::Map)};
    for (const char* key :
         {"mlp", "norm", "positions", "rope_theta", "bias", "tied_embeddings", "dropout", "vocab", "kv_heads"}) {
      if (family.has(key)) f.fields[key] = family.get_node(key);
    }
    // Each field as a model spec reads it, so a bad one is named here, at its own line.
    TransformerSpec checked;
    read_architecture_fields(family, checked);
    if (family.has("vocab")) family.get_int("vocab", 1, 1 << 24);
    if (family.has("kv_heads")) family.get_int("kv_heads", 1, 1 << 20);
    family.reject_unknown_keys();
    spec.families.push_back(f);
  }
  for (const YAML::Node& node : map.get_node("machines")) {
    spec.machines.push_back(read_machine_entry(YamlMap(node, path, "machine entry"), path));
  }
  if (map.has("recipes")) {
    for (const YAML::Node& node : map.get_node("recipes")) {
      spec.recipes.push_back(read_recipe_entry(YamlMap(node, path, "recipe entry")));
    }
  }
  map.reject_unknown_keys();
  return spec;
}

std::string lower(std::string text) {
  for (char& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

bool word_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The words after each `key` in `text` (in any case, not inside a longer word): after "KEY =" (spaces
// optional), or after "KEY " where the key has a space itself ("grad accum 16"); a word ends at a
// space or ';'. A scan, not a std::regex: one compiled per cell made validate 2x slower, 5x under
// the sanitizers.
std::vector<std::string> tagged_values(const std::string& text, const std::string& key) {
  const std::string haystack = lower(text), needle = lower(key);
  const bool spaced = key.find(' ') != std::string::npos;
  std::vector<std::string> values;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) {
    if (at > 0 && word_character(haystack[at - 1])) continue;
    size_t i = at + needle.size();
    while (i < text.size() && space(text[i])) ++i;
    if (!spaced) {
      if (i == text.size() || text[i] != '=') continue;
      for (++i; i < text.size() && space(text[i]);) ++i;
    } else if (i == at + needle.size()) {
      continue;  // "grad accumulation": no space after the key
    }
    size_t end = i;
    while (end < text.size() && text[end] != ';' && !space(text[end])) ++end;
    values.push_back(text.substr(i, end - i));
  }
  return values;
}

class Row {
 public:
  explicit Row(const CorpusRecord& record) : record_(record) {}
  const std::string& operator[](const std::string& column) const {
    if (const std::string* value = find(column)) return *value;
    throw InputError(record_.where + ": no column '" + column + "'");
  }
  bool has(const std::string& column) const { return find(column) != nullptr; }
  // A whole number from 1 to 2^30 (kLargestCount: a product of two stays exact; the grid's
  // product is checked whole, grid_too_large).
  int64_t integer(const std::string& column) const { return count(column, (*this)[column]); }
  // The whole number `key` tags in the cell ("VP" in "CP=1; VP=4", "grad accum" in "grad accum 16"),
  // in any case and spacing; 0 where the key is absent or its value n/a or N/A (not stated). Anything
  // else after the key, or the key given twice, is an error naming the cell: "VP=12.9" read as 12
  // and "VP=twelve" as no interleaving, silently.
  int64_t tagged_count(const std::string& column, const std::string& key) const {
    const std::string& text = (*this)[column];
    const std::vector<std::string> stated = tagged_values(text, key);
    if (stated.size() > 1) throw InputError(where() + ": column '" + column + "': " + key + " given twice in '" + text + "'");
    if (stated.empty() || stated[0] == "n/a" || stated[0] == "N/A") return 0;
    return count(column, stated[0]);
  }
  // A measurement from 1e-9 to 1e12 (seconds, tokens per second); 0 when the cell is empty.
  double number(const std::string& column) const {
    const std::string& text = (*this)[column];
    if (text.empty()) return 0;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !(value >= 1e-9 && value <= 1e12)) {
      throw InputError(record_.where + ": column '" + column + "': expected a number from 1e-9 to 1e12, got '" + text + "'");
    }
    return value;
  }
  const std::string& where() const { return record_.where; }

 private:
  int64_t count(const std::string& column, const std::string& text) const {
    try {
      size_t used = 0;
      const long long value = std::stoll(text, &used);
      if (used == text.size() && value > 0 && value <= kLargestCount) return value;
    } catch (const std::exception&) {
    }
    throw InputError(record_.where + ": column '" + column + "': expected a whole number from 1 to 2^30, got '" + text + "'");
  }
  const std::string* find(const std::string& column) const {
    for (const auto& [name, value] : record_.cells) {
      if (name == column) return &value;
    }
    return nullptr;
  }
  const CorpusRecord& record_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A precision, recompute or sequence_parallel cell in words the translation does not read, quoted
// (it would price the row as bf16, without recompute or without sequence parallelism); empty when
// each is read. The words after the first may say more: "full (activation checkpointing)".
std::string unread_cell(const Row& row) {
  const std::string& precision = row["precision"];
  if (!contains(precision, "bf16") && !contains(precision, "fp8") && !contains(precision, "float8")) {
    return "precision '" + precision + "' names none of bf16, fp8 and float8, the precisions the corpus prices";
  }
  const std::string& recompute = row["recompute"];
  if (!recompute.starts_with("none") && !recompute.starts_with("selective") && !recompute.starts_with("full")) {
    return "recompute '" + recompute + "' starts with none of none, selective and full";
  }
  // torchtitan's rows leave it empty: its TP is always sequence-parallel (set_config).
  const std::string& sequence_parallel = row["sequence_parallel"];
  const bool torchtitan = row["name"].starts_with("torchtitan");
  if (sequence_parallel != "yes" && sequence_parallel != "no" && sequence_parallel != "n/a" &&
      sequence_parallel != "not stated" && !(torchtitan && sequence_parallel.empty())) {
    return "sequence_parallel '" + sequence_parallel + "' is none of yes, no, n/a and not stated";
  }
  return "";
}

// What the model cannot express yet, in the row's own words; empty when it can.
std::string unexpressible_reason(const Row& row) {
  const std::string& recompute = row["recompute"];
  if (contains(recompute, "not stated")) return "recompute not stated ('" + recompute + "')";
  if (row["name"].rfind("torchtitan", 0) == 0 && row.integer("PP") > 1) {
    if (!row.has("pipeline_microbatches")) {
      return "torchtitan's pipeline splits each rank's local batch of " + row["microbatch"] +
             " sequences into microbatches the row does not state (pipeline_parallel_microbatches), "
             "not one microbatch of " + row["microbatch"];
    }
    if (row.integer("microbatch") % row.integer("pipeline_microbatches") != 0) {
      return "the local batch of " + row["microbatch"] + " sequences does not divide into " +
             row["pipeline_microbatches"] + " pipeline microbatches (recipes:)";
    }
  }
  if (row["sequence_parallel"] == "not stated" && row.integer("TP") > 1) {
    return "sequence parallelism not stated with TP=" + row["TP"];
  }
  return unread_cell(row);
}

Recompute parse_recompute(const std::string& text) {
  if (text.rfind("selective", 0) == 0) return Recompute::selective;
  if (text.rfind("full", 0) == 0) return Recompute::full;
  return Recompute::none;
}

TransformerSpec row_model(const Row& row, const Family& family) {
  YAML::Node node = YAML::Clone(family.fields);
  node["name"] = row["name"];
  for (const char* column : {"layers", "hidden", "heads", "ffn_hidden", "seq_len", "global_batch"}) {
    node[column] = row.integer(column);
  }
  if (!row["kv_heads"].empty()) node["kv_heads"] = row.integer("kv_heads");
  if (!row["vocab"].empty()) node["vocab"] = row.integer("vocab");
  // fp8, float8 linears (torchtitan), amp_fp8 (llm-foundry with Transformer Engine): fp8 GEMMs.
  const std::string& precision = row["precision"];
  node["precision"] = contains(precision, "fp8") || contains(precision, "float8") ? "fp8" : "bf16";
  TransformerSpec spec = transformer_spec_from_yaml(node, row.where());
  validate(spec, row.where());
  return spec;
}

// Whether the row ran torchtitan's async TP (--parallelism.enable_async_tensor_parallel):
// its name or precision says so.
bool async_tp(const Row& row) {
  return contains(lower(row["name"]), "asynctp") || contains(lower(row["precision"]), "asynctp");
}

// Whether the row ran under torch.compile: it says so (name or precision), or
// it needs it — torchtitan refuses async TP without --training.compile
// (parallelize_llama's check), and its float8 linears (torchao Float8Linear)
// rely on compile to fuse the dynamic scaling casts.
bool compiled(const Row& row) {
  const std::string name = lower(row["name"]), precision = lower(row["precision"]);
  if (contains(name, "compile") || contains(precision, "compile") || async_tp(row)) return true;
  return name.rfind("torchtitan", 0) == 0 && contains(precision, "float8");
}

// torchtitan's pipeline (its 405B rows, configs @9dec370) splits each rank's local batch (the
// row's microbatch) into the recipe's pipeline microbatches, and its Interleaved1F1B runs two
// stages per rank when no split points are given (pipelining_utils.py generate_split_points).
// FSDP2 under it gathers each stage's weights once per iteration and reduces its gradients once:
// apply_fsdp passes reshard_after_forward=False under PP ("to avoid per-microbatch all-gathers",
// parallelisms/parallelize_llama.py), and PyTorch's PipelineStage turns gradient sync off for every
// microbatch's backward but the last, after which it runs each block's post_backward, the
// reduce-scatters, in turn (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync).
// That is a sharded optimizer over data × context (zero = 1) reducing after the backward, not
// AxoNN's per-microbatch Z.
void torchtitan_pipeline(const Row& row, bool fsdp, CorpusCase& c) {
  ParallelConfig& config = c.config;
  config.microbatch = row.integer("microbatch") / row.integer("pipeline_microbatches");
  if (contains(lower(row["name"]), "interleaved")) config.interleave = 2;  // the schedule, in the row's name
  c.notes.push_back(row["pipeline_microbatches"] + " pipeline microbatches per iteration (recipes:)");
  if (!fsdp) return;
  config.data = row.integer("DP"), config.z = 1, config.zero = 1;
  c.stack.grad_reduce = GradReduce::after_backward;
  c.notes.push_back("FSDP under the pipeline priced as zero=1 (weights gathered once per iteration)");
}

// torchtitan's per-layer selective checkpointing, selective_ac_option "2" (its default at @3faaa1a0:
// "checkpoint every other layer", config_manager.py), wraps every second block of a stage in a full
// checkpoint (parallelize_llama.py _apply_ac_to_transformer_block: _count % ac_freq == 0): full
// recompute of half of each chunk's layers. Empty, or why a row cannot be priced so.
std::string per_layer_checkpointing(const Row& row, ParallelConfig& config) {
  if (!contains(row["recompute"], "per-layer")) return "";
  config.recompute = Recompute::full;
  config.recompute_layers = row.integer("layers") / (config.pipeline * config.interleave) / 2;
  if (config.recompute_layers > 0) return "";
  return "per-layer checkpointing of every second block: a chunk of " +
         std::to_string(row.integer("layers") / (config.pipeline * config.interleave)) + " layer holds none";
}

// A degree the other_parallel cell states again ("TP=8 PP=8" in torchtitan's rows) is its column's.
void check_stated_degrees(const Row& row) {
  for (const char* column : {"TP", "PP", "DP"}) {
    const int64_t stated = row.tagged_count("other_parallel", column);
    if (stated != 0 && stated != row.integer(column)) {
      throw InputError(row.where() + ": column 'other_parallel': " + column + "=" + std::to_string(stated) +
                       " where column '" + column + "' says " + row[column]);
    }
  }
}

// The grid and schedule of the row (see the header for the rules).
void set_config(const Row& row, CorpusCase& c) {
  check_stated_degrees(row);
  const std::string& other = row["other_parallel"];
  // FSDP SHARD_GRAD_OP keeps whole weights on every rank and shards gradients and optimizer
  // state (PyTorch's ShardingStrategy docs: "Gradients and optimizer states are sharded during
  // computation ... parameters are sharded outside computation" and gathered once per
  // forward-backward): ZeRO-2 over the data group, not AxoNN's Z.
  const bool grad_op = contains(other, "SHARD_GRAD_OP");
  const bool fsdp = contains(other, "FSDP") && !grad_op;
  const int64_t dp = row.integer("DP"), per_rank_microbatch = row.integer("microbatch");
  ParallelConfig& config = c.config;
  config.pipeline = row.integer("PP");
  config.y = row.integer("TP");
  config.z = fsdp ? dp : 1;
  config.data = fsdp ? 1 : dp;
  config.context = std::max<int64_t>(1, row.tagged_count("other_parallel", "CP"));
  config.microbatch = per_rank_microbatch * config.z;
  config.interleave = std::max<int64_t>(1, row.tagged_count("other_parallel", "VP"));
  config.recompute = parse_recompute(row["recompute"]);
  // torchtitan's TP is always sequence-parallel: its apply_tp shards the norms' inputs and outputs
  // over the sequence (SequenceParallel on attention_norm, ffn_norm and norm; torchtitan
  // models/llama3/infra/parallelize.py), with FSDP (z) beside it; its rows leave the column empty.
  config.sequence_parallel = row["sequence_parallel"] == "yes" || (c.source == "torchtitan" && config.y > 1);
  // Composer's FSDP `mixed_precision: DEFAULT` reduce-scatters the gradients in fp32 (PURE: in
  // bf16), the MPT rows' "FSDP mixed precision" (the llm-foundry benchmarking README's MP Mode;
  // machine_profile.h's ReduceDtype says which Composer).
  if (contains(other, "mixed precision DEFAULT")) c.stack.reduce_dtype = ReduceDtype::fp32;
  // torch.compile's Inductor fuses the eager stack's elementwise chains into single kernels,
  // float8's casts into the ops that produce their inputs.
  if (compiled(row)) c.stack.elementwise = ElementwiseKind::fused, c.stack.fp8_casts = Fp8Casts::fused;
  // Async TP micro-pipelines the TP collectives with the GEMMs: hidden, as Megatron-LM's (the
  // machine entries say exposed for torchtitan's eager DTensor TP).
  if (async_tp(row)) c.stack.tp_collectives = TpCollectives::overlapped;
  // torchao's enable_fsdp_float8_all_gather with precompute_float8_dynamic_scale_for_fsdp (the Trainy
  // H200 command names both): the weights cast on their shards and gathered in fp8.
  if (contains(row["precision"], "fp8 FSDP all-gather")) c.stack.fp8_weights = Fp8Weights::gathered;
  if (contains(other, "distributed optimizer")) config.zero = 1;  // Megatron's distributed optimizer is ZeRO-1
  if (grad_op) config.zero = 2;
  if (c.source == "torchtitan" && config.pipeline > 1) return torchtitan_pipeline(row, fsdp, c);
  // torchtitan with context parallelism applies FSDP over the dp_shard and cp mesh dimensions
  // together (torchtitan parallelize_llama.py: fully_shard on the "dp_shard_cp" mesh): the CP
  // ranks shard gradients and optimizer state too. axo's z shards over DP only, so the rest
  // is zero=2 over the data × context group (zero_shards); weights stay whole over CP.
  if (fsdp && config.context > 1) {
    config.zero = 2;
    c.notes.push_back("FSDP over dp_shard x cp priced as z=DP with zero=2 over the context group "
                      "(the weights' CP sharding not modelled)");
  }
}

// The batch must be DP · microbatch · accumulation steps, as every source states it.
std::string batch_problem(const Row& row) {
  const int64_t steps =
      std::max(row.tagged_count("other_parallel", "GA"), row.tagged_count("other_parallel", "grad accum"));
  const int64_t per_step = row.integer("DP") * row.integer("microbatch");
  const int64_t batch = row.integer("global_batch");
  if (batch % per_step != 0 || (steps > 0 && batch != per_step * steps)) {
    return "global_batch " + row["global_batch"] + " is not DP·microbatch·GA = " + row["DP"] + "·" +
           row["microbatch"] + "·" + std::to_string(steps);
  }
  return "";
}

// The iteration time: published, or the tokens of a batch over the published tokens/s. A row
// giving both must agree with itself (the corpus's agree to 0.1%, their rounding).
void set_measured(const Row& row, CorpusCase& c) {
  const double iteration_s = row.number("iter_time_s"), tokens_per_s = row.number("tokens_per_s");
  const double from_tokens_s =
      tokens_per_s > 0 ? double(row.integer("global_batch") * row.integer("seq_len")) / tokens_per_s : 0;
  if (iteration_s > 0 && from_tokens_s > 0 && std::abs(from_tokens_s / iteration_s - 1) > 0.01) {
    char text[240];
    std::snprintf(text, sizeof text, ": iter_time_s %g and global_batch x seq_len / tokens_per_s = %g s disagree "
                  "by %+.1f%%: give one, or both of one run", iteration_s, from_tokens_s,
                  100 * (from_tokens_s / iteration_s - 1));
    throw InputError(row.where() + text);
  }
  c.measured_s = iteration_s > 0 ? iteration_s : from_tokens_s;
  c.measured_from = iteration_s > 0 ? "iter_time_s" : from_tokens_s > 0 ? "tokens_per_s" : "";
}

CorpusCase express_row(const Row& row, const CorpusSpec& spec) {
  CorpusCase c;
  c.name = row["name"];
  c.source = source_of(c.name);
  c.gpu_type = row["gpu_type"];
  c.confidence = row["confidence"];
  c.where = row.where();
  set_measured(row, c);
  int64_t gpus_per_host = 0;
  for (const MachineEntry& m : spec.machines) {
    if (m.source != c.source || m.gpu_type != c.gpu_type) continue;
    c.gpu = m.gpu, c.machine = m.machine, c.stack = m.stack, gpus_per_host = m.gpus_per_host;
  }
  for (const RecipeEntry& r : spec.recipes) {
    if (!contains(row["source"], r.source_contains)) continue;
    c.stack.optimizer_state = r.optimizer_state;
    if (r.attention) c.stack.attention = *r.attention;
  }
  if (c.machine.empty()) {
    c.gpu = c.gpu_type;
    c.why_not = "no machine preset for GPU type '" + c.gpu_type + "' in source " + c.source;
    return c;
  }
  if (c.measured_s <= 0) {
    c.why_not = "no iteration time or tokens/s published";
    return c;
  }
  if (!(c.why_not = unexpressible_reason(row)).empty()) return c;
  if (!(c.why_not = batch_problem(row)).empty()) return c;
  if (row.has("gpus_per_node") && !row["gpus_per_node"].empty() && row.integer("gpus_per_node") != gpus_per_host) {
    c.why_not = "gpus_per_node " + row["gpus_per_node"] + " is not the " + std::to_string(gpus_per_host) +
                " GPUs per server of machine " + c.machine;
    return c;
  }
  const Family* family = nullptr;
  for (const Family& f : spec.families) {
    if (!family && row["model_family"].rfind(f.match, 0) == 0) family = &f;
  }
  if (!family) {
    c.why_not = "no architecture for model family '" + row["model_family"] + "'";
    return c;
  }
  c.model = row_model(row, *family);
  set_config(row, c);
  if (!(c.why_not = grid_too_large(c.config)).empty()) return c;  // before any product of the grid
  if (!(c.why_not = per_layer_checkpointing(row, c.config)).empty()) return c;  // once the chunks are known
  c.gpus = row.integer("gpus");
  if (c.config.gpus() != c.gpus) {
    c.why_not = "TP·PP·CP·DP = " + std::to_string(c.config.gpus()) + " does not equal gpus " + row["gpus"];
  }
  return c;
}

}  // namespace

std::vector<CorpusRecord> read_csv_records(const std::string& path) {
  const CsvRecords csv = parse_csv(read_input_file(path), path);
  const auto& rows = csv.rows;
  if (rows.size() == 1) throw InputError(path + ": no runs below the header line");
  std::vector<CorpusRecord> records;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::string where = path + ":" + std::to_string(csv.lines[r]);
    if (rows[r].size() != rows[0].size()) {
      throw InputError(where + ": expected " + std::to_string(rows[0].size()) + " columns, got " +
                       std::to_string(rows[r].size()));
    }
    CorpusRecord record{where, {}};
    for (size_t i = 0; i < rows[0].size(); ++i) record.cells.emplace_back(rows[0][i], rows[r][i]);
    records.push_back(std::move(record));
  }
  return records;
}

namespace {

// The row with its "not stated" recompute / sequence_parallel cells filled from the recipe it ran
// (recipes:), a value the row states itself kept, and a `pipeline_microbatches` cell where the
// recipe gives one.
CorpusRecord with_recipe_cells(CorpusRecord record, const CorpusSpec& spec) {
  auto cell = [&record](const std::string& column) -> std::string* {
    for (auto& [name, value] : record.cells) {
      if (name == column) return &value;
    }
    return nullptr;
  };
  if (!cell("source")) return record;
  const std::string source = *cell("source");
  for (const RecipeEntry& r : spec.recipes) {
    if (!contains(source, r.source_contains)) continue;
    for (const auto& [column, value] : {std::pair{"recompute", r.recompute}, {"sequence_parallel", r.sequence_parallel}}) {
      std::string* text = cell(column);
      if (text && !value.empty() && contains(*text, "not stated")) *text = value;
    }
    if (r.pipeline_microbatches > 0) {
      record.cells.emplace_back("pipeline_microbatches", std::to_string(r.pipeline_microbatches));
    }
  }
  return record;
}

}  // namespace

namespace {

// Each row named, once: a name is its source (its first word) and what --explain finds it by, and a
// row given twice would count twice.
void reject_unnamed_or_repeated_rows(const std::vector<CorpusCase>& cases) {
  std::map<std::string, std::string> first_at;  // name, where
  for (const CorpusCase& c : cases) {
    if (c.name.empty()) throw InputError(c.where + ": column 'name': empty (a row's name starts with its source)");
    const auto [earlier, inserted] = first_at.emplace(c.name, c.where);
    if (!inserted) {
      throw InputError(c.where + ": row '" + c.name + "': named twice (first at " + earlier->second +
                       "): its run would count twice");
    }
  }
}

}  // namespace

std::string source_of(const std::string& name) { return name.substr(0, name.find('_')); }

namespace {

// The columns express_row reads of every row (`source` too where recipes: match it): one missing
// is named at the header, not at the first row that reads it.
void check_columns(const CorpusRecord& first, const CorpusSpec& spec) {
  std::vector<std::string> needed = {"name",     "model_family", "layers",        "hidden",       "heads",
                                     "kv_heads", "ffn_hidden",   "vocab",         "seq_len",      "global_batch",
                                     "gpu_type", "gpus",         "TP",            "PP",           "DP",
                                     "other_parallel", "microbatch", "recompute", "sequence_parallel",
                                     "precision", "iter_time_s", "tokens_per_s", "confidence"};
  if (!spec.recipes.empty()) needed.push_back("source");
  for (const std::string& column : needed) {
    const auto named = [&column](const auto& cell) { return cell.first == column; };
    if (std::none_of(first.cells.begin(), first.cells.end(), named)) {
      throw InputError(spec.csv_path + ":1: no column '" + column + "' in the header (every row is read by it)");
    }
  }
}

}  // namespace

std::string corpus_table_path(const std::string& yaml_path) { return load_corpus_spec(yaml_path).csv_path; }

std::vector<CorpusCase> load_corpus(const std::string& yaml_path) {
  const CorpusSpec spec = load_corpus_spec(yaml_path);
  std::vector<CorpusCase> cases;
  std::vector<CorpusRecord> records = read_csv_records(spec.csv_path);
  check_columns(records.front(), spec);
  for (CorpusRecord& record : records) record = with_recipe_cells(std::move(record), spec);
  for (const CorpusRecord& record : records) cases.push_back(express_row(Row(record), spec));
  reject_unnamed_or_repeated_rows(cases);
  return cases;
}

}  // namespace axo
