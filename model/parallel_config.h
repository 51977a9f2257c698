// One way to split a model over G GPUs: the 4D grid, the pipeline, and the
// choices that change time and memory (microbatch, recompute, offload,
// overlap, interleaving, rank order).
//
// G = pipeline × data × context × z × y × x (ARCHITECTURE.md, "Dimensions
// around the 4D layer"): context splits each sequence over its ranks (ring
// attention, model/cost_context.h). Megatron-LM's 1D tensor
// parallelism is x = z = 1 (y = its tensor-parallel size), optionally with
// sequence parallelism; torchtitan's FSDP + TP is x = 1 with z its FSDP
// degree, its TP always sequence-parallel.
//
// model/config_fields.h declares the fields once (names, text, --fix, the
// search); equality and the YAML below walk that table.
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace axo {

enum class Recompute { none, selective, full };
inline constexpr std::array<const char*, 3> kRecomputeNames = {"none", "selective", "full"};
const char* to_string(Recompute recompute);

// The six grid dimensions, named as in the rank order string; the enum's
// order is the default rank order "xyzcdp" (Megatron-LM's tp-cp-dp-pp).
enum class GridDim { x, y, z, context, data, pipeline };
constexpr int kGridDims = 6;
char order_letter(GridDim dim);  // 'x', 'y', 'z', 'c', 'd', 'p'

// A set of the grid's dimensions, one bit per GridDim: the group of them all together.
using GridDims = uint32_t;
constexpr GridDims grid_dims(std::initializer_list<GridDim> dims) {
  GridDims set = 0;
  for (GridDim d : dims) set |= 1u << int(d);
  return set;
}
constexpr bool has_dim(GridDims set, GridDim dim) { return (set >> int(dim) & 1u) != 0; }

// Every dimension but the pipeline's: one stage's ranks.
inline constexpr GridDims kStageDims = grid_dims({GridDim::x, GridDim::y, GridDim::z, GridDim::context,
                                                  GridDim::data});

// The two-dimension groups every stack prices: the gradients' data × context
// (collective_group) and fp8's amax over x × y (cost_fp8.cc). The search's rank
// orders (config_fields.cc) tell orders apart by them and by the stack's other
// groups (priced_groups in model/cost_collective.h).
inline constexpr std::array<std::pair<GridDim, GridDim>, 2> kPricedDimensionPairs{
    {{GridDim::data, GridDim::context}, {GridDim::x, GridDim::y}}};

// kPricedDimensionPairs as groups.
inline std::vector<GridDims> pair_groups() {
  std::vector<GridDims> groups;
  for (auto [a, b] : kPricedDimensionPairs) groups.push_back(grid_dims({a, b}));
  return groups;
}

struct ParallelConfig {
  int64_t pipeline = 1;
  int64_t data = 1;
  int64_t x = 1;
  int64_t y = 1;
  int64_t z = 1;
  int64_t context = 1;     // context-parallel ranks: each holds s/context tokens of every sequence
  int64_t microbatch = 1;  // sequences per microbatch per data-parallel replica
  Recompute recompute = Recompute::none;
  // With full recompute, the layers of each pipeline chunk recomputed, the chunk's first ones; the
  // rest keep their activations (Megatron-LM's --recompute-method block --recompute-num-layers).
  // 0: every layer.
  int64_t recompute_layers = 0;
  bool offload = false;            // optimizer state in host memory
  bool overlap = true;             // overlap tensor-parallel collectives (OAR, ORS, OAG)
  bool sequence_parallel = false;  // Megatron sequence parallelism (x = 1, y > 1; any z)
  int64_t interleave = 1;          // virtual pipeline chunks per stage
  // ZeRO stage over the data group: 1 shards the optimizer state, 2 the
  // gradients too (Rajbhandari et al., SC'20; Megatron's distributed optimizer is 1).
  int64_t zero = 0;
  // Rank order, innermost (fastest-varying) dimension first.
  std::array<GridDim, kGridDims> order = {GridDim::x, GridDim::y, GridDim::z, GridDim::context,
                                          GridDim::data, GridDim::pipeline};

  int64_t gpus() const { return pipeline * data * context * x * y * z; }
  int64_t size(GridDim dim) const;
  // Distance in rank numbers between neighbours of a group of `dim`.
  int64_t stride(GridDim dim) const;
  std::string order_string() const;  // e.g. "xyzcdp"
};

// Full recompute of some layers of each chunk only (recompute_layers > 0).
inline bool partial_recompute(const ParallelConfig& c) {
  return c.recompute == Recompute::full && c.recompute_layers > 0;
}
// Empty, or why recompute_layers `layers` does not apply beside `recompute` (it needs full recompute,
// and is not negative); on any grid.
std::string recompute_problem(Recompute recompute, int64_t layers);
// Empty, or why `context` ranks cannot split sequences of `seq_len` tokens: with context > 1 each
// splits into 2·context equal chunks (causal load balance, Megatron-LM megatron/core/utils.py
// get_batch_on_this_cp_rank); context=1 splits nothing, so any length goes.
std::string context_problem(int64_t context, int64_t seq_len);
// Empty, or why `c`'s sequence parallelism cannot run: it needs x=1 and y>1 (names the values that
// break it: "..., not y=1").
std::string sequence_parallel_problem(const ParallelConfig& c);
// Empty, or why `c`'s sequence parallelism cannot split sequences of `seq_len` tokens: Megatron-LM
// scatters the sequence dimension of each context rank's seq_len / context tokens over Y
// (megatron/core/tensor_parallel/mappings.py _split_along_first_dim: "First dimension of the tensor
// should be divisible by tensor parallel size"), as torchtitan's SequenceParallel shards it.
std::string sequence_split_problem(const ParallelConfig& c, int64_t seq_len);

// Every field of model/config_fields.h equal.
bool operator==(const ParallelConfig& a, const ParallelConfig& b);

// Parses "xyzcdp" (each of x, y, z, c, d, p once). The five letters without
// c (plan files and --fix values written before context existed) also parse:
// c then goes just inside d. Throws InputError otherwise.
std::array<GridDim, kGridDims> parse_order(const std::string& text, const std::string& source);

// Every field, in table order: counts as integers, choices and the order as
// names, on/off as booleans. Reading, the fields marked optional may be
// absent (then they are the default); a malformed field names its line.
YAML::Node to_yaml(const ParallelConfig& config);
ParallelConfig parallel_config_from_yaml(const YAML::Node& node, const std::string& source);

}  // namespace axo
