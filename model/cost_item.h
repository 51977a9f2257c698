// What `--explain` lists and how the cost model's steps record it: one item
// per GEMM, memory-bound op, collective or transfer, with where it runs
// (scope), when (phase), its size, rate and its exposed time.
//
// Every step of the cost model computes a number and records its item in the
// same call (CostRecorder), so the numbers and the explanation cannot drift;
// with no item list the recorder does nothing and costs nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/parallel_config.h"

namespace axo {

// Where an item runs: once per layer of the slowest stage, on the first or the
// last stage only, or once per iteration.
enum class CostScope { layer, first_stage, last_stage, step };
enum class CostPhase { forward, backward, recompute, step, forward_backward };
enum class CostKind { gemm, memory, collective, p2p };

const char* to_string(CostScope scope);  // "layer", "first stage", "last stage", "step"
const char* to_string(CostPhase phase);  // "forward", ..., "forward+backward"
const char* to_string(CostKind kind);    // "gemm", "memory", "collective", "p2p"
// A grid dimension as a group name: "x", "y", "z", "context", "data", "pipeline".
const char* group_name(GridDim dim);

// One line of an explanation.
struct CostItem {
  CostScope scope = CostScope::layer;
  CostPhase phase = CostPhase::forward;
  CostKind kind = CostKind::gemm;
  std::string name;              // e.g. "qkv forward", "all_reduce partial sums (attn_out)"
  std::optional<GridDim> group;  // collectives and transfers only
  int64_t group_size = 0;
  int64_t ranks_per_node = 0;
  double bytes = 0;
  double flops = 0;
  double bandwidth_GBps = 0;  // achieved bus GB/s (GEMM: TFLOP/s, flops / seconds)
  double seconds = 0;         // once
  double exposed = 0;         // of `seconds`, what is not hidden by overlap
  double per_iteration = 0;   // how many times it runs per iteration on the slowest stage
};

// Collects items when given a list; every method is a no-op without one.
// An item recorded `n` times per microbatch runs n · (runs of its scope) times
// per iteration: layer items layers-of-the-slowest-stage · m times (its
// recomputed layers · m for the recompute phase's, fewer under partial
// recompute), first and last stage items m times, step items once.
class CostRecorder {
 public:
  CostRecorder() = default;  // records nothing
  CostRecorder(std::vector<CostItem>* items, double layer_runs, double microbatches, double recompute_runs)
      : items_(items), layer_runs_(layer_runs), microbatches_(microbatches), recompute_runs_(recompute_runs) {}
  // Every layer recomputes, if the configuration recomputes at all.
  CostRecorder(std::vector<CostItem>* items, double layer_runs, double microbatches)
      : CostRecorder(items, layer_runs, microbatches, layer_runs) {}

  bool recording() const { return items_ != nullptr; }
  // `gemms` GEMMs of 2mnk flops each (the first [m×k]·[k×n]) that took
  // `seconds` together; returns `seconds`.
  double gemm(CostScope scope, CostPhase phase, const std::string& name, double m, double n, double k,
              double seconds, int gemms = 1) const;
  // A memory-bound op moving `bytes` in `seconds`; returns `seconds`.
  double memory(CostScope scope, CostPhase phase, const std::string& name, double bytes, double seconds) const;
  // A copy of `seconds` of which `exposed` is paid (the rest hidden); returns `exposed`.
  double memory(CostScope scope, CostPhase phase, const std::string& name, double bytes, double seconds,
                double exposed) const;
  // A collective of `bytes` over `group_size` ranks of `group` (`ranks_per_node` of them sharing
  // a node) that took `seconds`, all exposed; returns `seconds`.
  double exposed_collective(CostScope scope, CostPhase phase, const std::string& name, GridDim group,
                            int64_t group_size, int64_t ranks_per_node, double bytes, double seconds) const;
  // Any other item; `per_iteration` holds its count per microbatch (step: per iteration).
  void add(CostItem item) const;

 private:
  double runs(CostScope scope, CostPhase phase) const;

  std::vector<CostItem>* items_ = nullptr;
  double layer_runs_ = 0;      // layers of the slowest stage · microbatches
  double microbatches_ = 0;    // microbatches per iteration
  double recompute_runs_ = 0;  // the slowest stage's recomputed layers · microbatches
};

}  // namespace axo
