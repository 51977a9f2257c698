// The analytical performance and memory model of AxoNN-style 4D hybrid
// parallelism: what one iteration of a configuration costs on a machine.
//
// The cost is computed in named steps that follow the data flow, each in its
// own file:
//   1. cost_shapes       the local shapes one rank works on per microbatch
//   2. cost_layer        one layer's GEMMs (gemm_model.h) and memory-bound ops
//      cost_stage_ends   the embedding (first stage), LM head and loss (last)
//   3. cost_tp_comm      the layer's tensor-parallel collectives
//                        (comm_model.h) and what overlap (OAG, OAR, ORS) hides
//      cost_context      the ring attention over the context group
//   4. cost_stage        each stage's time over its own layers (the split of
//                        stage_partition.h); the slowest sets the pace
//   5. cost_pipeline     the bubble and the point-to-point traffic
//   6. cost_data_parallel  the gradient all-reduce over the data group
//                        (data × context: cost_collective.h)
//   7. cost_optimizer    the optimizer step and CPU offload
//   8. memory_model      bytes per device; the fullest stage sets the memory
// Per iteration, with m = B / (data · microbatch) microbatches:
//   compute, tp_comm = m · per-microbatch time of the slowest stage
//   bubble           = (p − 1)/v · per-microbatch time of that stage
//   pp_comm          = 2 · t_p2p · (v·m + p − 1)
//   dp_comm          = the all-reduce of the stage's gradient shard beyond the
//                      last microbatch's backward it overlaps
//   optimizer, offload as in ARCHITECTURE.md ("CPU offload")
// Every step records what it charges through one CostRecorder (cost_item.h),
// so evaluate() and explain() compute the same numbers by the same code.
//
// Threads: a const CostModel may be shared between threads. Its const
// methods read only the model and the machine; the memos they fill, of
// per-microbatch compute (keyed by x, y, z, context, microbatch, recompute
// and sequence parallelism) and of the layer's and stage ends' tensor-parallel
// and ring communication (that key, overlap, and the ranks per node of the
// x, y, z and context groups), are guarded by a mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/breakdown.h"
#include "model/config_fields.h"
#include "model/cost_item.h"
#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/stage_partition.h"
#include "model/transformer_spec.h"

namespace axo {

class CostModel {
 public:
  CostModel(TransformerSpec spec, MachineProfile machine);

  const TransformerSpec& spec() const { return spec_; }
  const MachineProfile& machine() const { return machine_; }

  // Empty when the configuration can be built for this model; otherwise what
  // does not divide what, e.g. "y=3 does not divide heads=32".
  std::string check(const ParallelConfig& config) const;
  // Empty when this machine can price `config` for this model: a rate for its precision
  // (precision_problem) and a configuration check() accepts; otherwise why not.
  std::string pricing_problem(const ParallelConfig& config) const;
  // Empty, or why no configuration can hold `fixed`'s values, naming them: the rules of check() on
  // the settings (batch and microbatch, interleaving and its chunks, sequence parallelism,
  // recompute and recompute_layers) that the held values break whatever the free fields are.
  // With every grid field held, also check() of the held values (the free settings at their
  // defaults). With `gpus`, also the settings the search tries only where they matter (zero
  // where data·context > 1, overlap off where x·y·z > 1) when the held values and the GPU
  // count leave that product 1. For a --fix that leaves the search nothing to cost.
  std::string check_held(const FixedFields& fixed, int64_t gpus = 0) const;

  // Cost of a configuration that passed check().
  Breakdown evaluate(const ParallelConfig& config) const;
  // Same, with its memory already known (memory_per_device(spec(), config,
  // machine().attention)): the search computes it once for every rank order.
  Breakdown evaluate(const ParallelConfig& config, const MemoryBreakdown& memory) const;
  // Same, listing every GEMM, op and collective into `items`.
  Breakdown explain(const ParallelConfig& config, std::vector<CostItem>& items) const;

  // A lower bound on evaluate(config).iter_time that ignores communication,
  // the pipeline and the optimizer: m × the compute of the most layers a stage
  // runs, plus (context > 1) their ring attention's exposed time on the
  // fastest placement any rank order gives it.
  // The search skips configurations whose bound is already too slow.
  double compute_lower_bound(const ParallelConfig& config) const;
  // A tighter bound for one rank order: the m microbatches and (p − 1)/v
  // bubble runs of the stage with the most layers, each at least those
  // layers' compute and exposed tensor-parallel and ring communication
  // (cost_stage.h, cost_pipeline.h): compute + tp_comm + bubble ≥ it.
  double paced_lower_bound(const ParallelConfig& config) const;

  // Number of microbatches per iteration: B / (data · microbatch).
  int64_t microbatches(const ParallelConfig& config) const;

  // The layers each stage runs (split_pipeline); throws InputError when a
  // chunk would have no layer (check() says so first).
  const PipelineSplit& pipeline_split(const ParallelConfig& config) const;

 private:
  struct Priced;
  std::string check_schedule(const ParallelConfig& config) const;  // sequence parallelism, interleaving
  std::string interleave_problem(const ParallelConfig& config) const;
  std::string check_held_chunks(const FixedFields& fixed, const ParallelConfig& held, int64_t gpus) const;
  std::string interleave_count_problem(const FixedFields& fixed, const ParallelConfig& held, int64_t gpus) const;
  static std::string check_held_settings(const FixedFields& fixed, const ParallelConfig& held, int64_t gpus);
  Priced price(const ParallelConfig& config, const CostRecorder& record,
               const MemoryBreakdown* memory = nullptr) const;

  TransformerSpec spec_;
  MachineProfile machine_;
  class ComputeMemo;
  std::shared_ptr<ComputeMemo> memo_;  // shared by copies: same model, same machine
};

}  // namespace axo
