// The analytical performance and memory model of AxoNN-style 4D hybrid
// parallelism: what one iteration of a configuration costs on a machine.
//
// Per microbatch and rank, every GEMM of a transformer block is timed at its
// exact local shape (gemm_model.h), the memory-bound ops by the bytes they
// move, and each collective of the 4D layer (ARCHITECTURE.md, "The 4D
// tensor-parallel linear layer") by its size and its group's placement
// (comm_model.h). Overlap (OAG, OAR, ORS) hides a collective under the
// compute that runs beside it. Stages add the embedding (first) and the LM
// head and loss (last); the slowest stage sets the pace. Then per iteration:
//   compute, tp_comm = m · per-microbatch time of the slowest stage
//   bubble           = (p − 1)/v · per-microbatch time of that stage
//   pp_comm          = 2 · t_p2p · (v·m + p − 1)
//   dp_comm          = the all-reduce of the stage's gradient shard beyond the
//                      last microbatch's backward it overlaps
//   optimizer, offload as in ARCHITECTURE.md ("CPU offload")
// with m = B / (data · microbatch) microbatches.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/breakdown.h"
#include "model/comm_model.h"
#include "model/machine_profile.h"
#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

// One line of an explanation: a GEMM, a memory-bound op or a collective.
struct CostItem {
  std::string scope;  // "layer", "first stage", "last stage", "step"
  std::string phase;  // forward, backward, recompute, step
  std::string kind;   // gemm, memory, collective, p2p, host
  std::string name;   // e.g. "qkv forward", "all-reduce partial sums (attn_out)"
  std::string group;  // x, y, z, data, pipeline (collectives only)
  int64_t group_size = 0;
  int64_t ranks_per_node = 0;
  double bytes = 0;
  double flops = 0;
  double bandwidth_GBps = 0;  // achieved (GEMM: TFLOP/s in flops / seconds)
  double seconds = 0;         // once
  double exposed = 0;         // of `seconds`, what is not hidden by overlap
  double per_iteration = 0;   // how many times it runs per iteration on the slowest stage
};

class CostModel {
 public:
  CostModel(TransformerSpec spec, MachineProfile machine);

  const TransformerSpec& spec() const { return spec_; }
  const MachineProfile& machine() const { return machine_; }

  // Empty when the configuration can be built for this model; otherwise what
  // does not divide what, e.g. "y=3 does not divide heads=32".
  std::string check(const ParallelConfig& config) const;

  // Cost of a configuration that passed check().
  Breakdown evaluate(const ParallelConfig& config) const;
  // Same, listing every GEMM, op and collective into `items`.
  Breakdown explain(const ParallelConfig& config, std::vector<CostItem>& items) const;

  // A lower bound on evaluate(config).iter_time that ignores communication,
  // the pipeline and the optimizer: m × the compute of one stage's layers.
  // The search skips configurations whose bound is already too slow.
  double compute_lower_bound(const ParallelConfig& config) const;

  // Number of microbatches per iteration: B / (data · microbatch).
  int64_t microbatches(const ParallelConfig& config) const;

 private:
  // Per-microbatch compute of one rank; depends only on the local shapes.
  struct LocalCompute {
    double layer_forward = 0;     // one block's GEMMs and memory-bound ops
    double layer_backward = 0;
    double layer_recompute = 0;   // extra forward work in backward (selective or full)
    double layer_forward_gemm = 0;    // window for the prefetched weight all-gather
    double linear_dw[4] = {};          // windows for the dX all-reduces (OAR)
    double linear_dx[4] = {};          // windows for sequence parallelism's input re-gather
    double layer_backward_window = 0;  // window for the async reduce-scatter (ORS)
    double first_forward = 0, first_backward = 0;  // embedding
    double last_forward = 0, last_backward = 0;    // final norm, LM head, loss
  };
  const LocalCompute& local_compute(const ParallelConfig& config,
                                    std::vector<CostItem>* items) const;
  LocalCompute compute_local(const ParallelConfig& config, std::vector<CostItem>* items) const;
  Breakdown cost(const ParallelConfig& config, std::vector<CostItem>* items) const;

  TransformerSpec spec_;
  MachineProfile machine_;
  struct ComputeKey {
    int64_t x, y, z, microbatch;
    Recompute recompute;
    bool sequence_parallel;
    bool operator==(const ComputeKey&) const = default;
  };
  struct ComputeKeyHash {
    size_t operator()(const ComputeKey& k) const;
  };
  mutable std::unordered_map<ComputeKey, LocalCompute, ComputeKeyHash> compute_cache_;
};

}  // namespace axo
