// Exporting a plan to the frameworks people already train with: the
// Megatron-LM arguments, the AxoNN initialisation, the torchtitan TOML
// sections, the DeepSpeed ds_config JSON, and a Slurm batch script that runs `axo train` on the plan.
//
// Each export_* function takes the model, the machine and the configuration
// and returns the text, or throws InputError saying why the framework cannot
// express the configuration. The matching *_limitation function returns that
// reason without throwing (empty when the configuration is expressible), so
// the planner can search again for the nearest configuration the framework
// can run (nearest_expressible) and show what the difference costs.
//
// The mapping of axo's grid onto each framework, and the sources it was read
// from, are stated at the top of each export_<framework>.cc and repeated in a
// comment in the text it writes.
#pragma once

#include <optional>
#include <string>

#include "model/cost_model.h"
#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/stage_partition.h"
#include "model/transformer_spec.h"
#include "planner/search.h"

namespace axo {

enum class ExportFormat { megatron, axonn, torchtitan, deepspeed, slurm };
const char* to_string(ExportFormat format);
// "megatron", "axonn", "torchtitan", "deepspeed" or "slurm"; throws InputError listing them otherwise.
ExportFormat parse_export_format(const std::string& text);

struct ExportContext {
  // The plan file `axo train` reads (the Slurm script's srun line).
  std::string plan_path = "plan.yaml";
  // The ds_config file the Megatron-DeepSpeed arguments name (--emit-out).
  std::string deepspeed_config_path = "ds_config.json";
  // One line written as a comment under the header, e.g. where the
  // configuration came from and its predicted iteration time. May be empty.
  std::string note;
};

std::string export_megatron(const TransformerSpec& spec, const MachineProfile& machine,
                            const ParallelConfig& config, const ExportContext& context);
std::string export_axonn(const TransformerSpec& spec, const MachineProfile& machine,
                         const ParallelConfig& config, const ExportContext& context);
std::string export_torchtitan(const TransformerSpec& spec, const MachineProfile& machine,
                              const ParallelConfig& config, const ExportContext& context);
// The ds_config JSON (ZeRO stage, batch, precision, offload), and the
// Megatron-DeepSpeed launch arguments that go with it (a bash array).
std::string export_deepspeed(const TransformerSpec& spec, const MachineProfile& machine,
                             const ParallelConfig& config, const ExportContext& context);
std::string deepspeed_launch_arguments(const TransformerSpec& spec, const MachineProfile& machine,
                                       const ParallelConfig& config, const ExportContext& context);
// Slurm launches any configuration axo plans, so this never throws for one
// that passed CostModel::check. (Until the parallel executor lands, `axo
// train` itself runs only one-rank plans: it says so for the others.)
std::string export_slurm(const TransformerSpec& spec, const MachineProfile& machine,
                         const ParallelConfig& config, const ExportContext& context);

std::string megatron_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                                const ParallelConfig& config);
std::string axonn_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                             const ParallelConfig& config);
std::string torchtitan_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                                  const ParallelConfig& config);
std::string deepspeed_limitation(const TransformerSpec& spec, const MachineProfile& machine,
                                 const ParallelConfig& config);

// The text for `format`, or InputError when it cannot express `config`.
std::string export_plan(ExportFormat format, const TransformerSpec& spec,
                        const MachineProfile& machine, const ParallelConfig& config,
                        const ExportContext& context);
// Empty when `format` can state `spec`; otherwise why not: a precision it does not train in (fp8
// for DeepSpeed and AxoNN, fp16 for torchtitan: their nearest, bf16, is priced otherwise); and
// Megatron-LM's and Megatron-DeepSpeed's arguments state the architecture, where a model with
// approximations (a config.json's details axo prices as their nearest) would train as another
// model. (torchtitan's and AxoNN's exports state the parallelism alone; the Slurm script runs axo
// train, whose executor says what it trains.)
std::string export_model_problem(ExportFormat format, const TransformerSpec& spec);
// Empty when `format` can express `config`; otherwise why not, in a sentence.
std::string export_limitation(ExportFormat format, const TransformerSpec& spec,
                              const MachineProfile& machine, const ParallelConfig& config);

// The fields a search holds fixed, on top of `user`'s, to stay near what `format` can express
// (Megatron-LM: x=1, z=1, offload off unless the user fixed it, ...): the settings it cannot run
// otherwise, and the defaults it runs. A field the user fixed is kept unless the framework needs
// another value; with `framework_values`, also where the user's may be one it cannot run: its own
// rank order, and y=1 for torchtitan's fp8 (its float8 tensor parallelism is off).
FixedFields expressible_fields(ExportFormat format, const TransformerSpec& spec, const FixedFields& user,
                               bool framework_values);

// The fastest configuration that fits and that `format` can express: the search runs again with
// expressible_fields, ranking only the configurations export_limitation accepts (their rank
// order, DeepSpeed's pipeline against its stack's reduction, torchtitan's fp8 tensor parallelism,
// ...); where none holds the user's --fix, again with the framework's values in place of the
// user's. Empty when there is none.
std::optional<PlanRow> nearest_expressible(ExportFormat format, const CostModel& model,
                                           const SearchOptions& options);

// The message for a plan `format` cannot express: why, and the nearest plan it
// can express with its predicted iteration time against the original's, naming
// the fields of the user's --fix it changes.
std::string inexpressible_message(ExportFormat format, const CostModel& model,
                                  const SearchOptions& options, const PlanRow& original);

// The pipeline split axo priced for `config` (remembered_split: the cost and
// memory models' split, plan.yaml's pipeline_split). Every export writes this
// split or refuses the plan; none assumes equal stages because the layers divide.
const PipelineSplit& priced_split(const TransformerSpec& spec, const ParallelConfig& config);
// True when every chunk of `split` holds as many layers as the first.
bool equal_chunks(const PipelineSplit& split);
// "axo splits the 32 layers as 17,15 (the LM head weighs as much as 1.8 layers, so the
// last chunk holds fewer)": the split, and why it is unequal when it is.
std::string split_sentence(const TransformerSpec& spec, const PipelineSplit& split);

// One line of a Megatron-style bash argument array: "  NAME\n" or "  NAME VALUE\n".
std::string flag(const std::string& name);
std::string flag(const std::string& name, int64_t value);
// "  NAME 500000\n": a real value in the fewest digits that give it back.
std::string decimal_flag(const std::string& name, double value);
// The flags Megatron-LM and Megatron-DeepSpeed share, in the order both write
// them: sequence parallelism, recompute, the batch and the model's shape up to
// its attention heads (their key/value heads' flags differ).
std::string batch_and_shape_flags(const TransformerSpec& spec, const ParallelConfig& c);

// Megatron-LM's and DeepSpeed's tensor parallelism is one-dimensional (axo's y):
// why a plan with x > 1 or z > 1 cannot be expressed there, or "" when it can.
std::string one_dimensional_tensor_problem(const ParallelConfig& c);

// `text` as one shell word: unchanged when it is plain, else single-quoted
// (the paths the Slurm and Megatron-DeepSpeed exports write).
std::string shell_word(const std::string& text);

// `config` as a --fix value that reproduces it exactly, e.g.
// "pipeline=2,data=4,context=1,x=1,y=8,z=1,microbatch=2,...,order=xyzcdp".
std::string fix_string(const ParallelConfig& config);

// True when every group of `config` (x, y, z, context, data, pipeline, and the
// stack's groups of several dimensions, `priced_groups`: priced_groups in
// model/cost_collective.h) sits on the same links as it would
// under the rank order `order` (innermost first, e.g. "xyzcpd"): same size and
// ranks per node. Then the two orders cost the same.
bool places_groups_as(const ParallelConfig& config, const std::string& order,
                      const std::vector<GridDims>& priced_groups, int64_t gpus_per_node);

// "" when `config` is in the framework's rank order `order`; otherwise "; the plan's ORDER places
// its groups as ORDER does on N-GPU nodes", for an export's comment on the order it runs.
std::string same_placement_note(const ParallelConfig& config, const std::string& order,
                                int64_t gpus_per_node);

}  // namespace axo
