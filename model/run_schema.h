// run.json: what `axo train` writes (executor/train/trainer.cc) and
// `axo report` reads (report/run_file.cc). The keys are named here once and
// both sides use these names.
//
// A run.json is one JSON object:
//   model        string   the model's name
//   backend      string   "cpu" (or "cuda")
//   ranks        integer  MPI ranks
//   grid         object   pipeline, data, z, y, x (integers), the settings of kGridSettings as
//                         --fix spells them (integers for counts and zero, else strings: "full",
//                         "on", "xyzcdp") and the overlaps run (kOverlap); runs before a setting
//                         was recorded lack it
//   schedule     string   "message-driven" or "1f1b"
//   pipeline     object   the layer split the run used (model/stage_partition.h):
//                           split  string  layers by stage, chunks joined by '+': "8,4", "2+2,2+1"
//                           chunks list    [begin, end) layer ranges in chunk order (chunk k = c·stages + s)
//   node         object   optional: ranks (per node), cores (per node), positive integers
//   batch, microbatch, seq  integers  sequences per step, per microbatch, tokens per sequence
//   parameters   integer  the model's parameters
//   precision    string   optional: "fp32" or "bf16", the precision the run trained in (older runs: fp32)
//   planned_precision  string  optional: the precision asked for ("fp8", "fp16") where the executor
//                         trained in `precision` instead (tools/train_command.cc)
//   memory       object   offload (boolean), device_limit_bytes (integer, 0 = none), ranks: a non-empty
//                         list of {rank, stage, chunks, device_peak_bytes, device_at_peak_bytes: one count
//                         per name in kMemoryNames adding up to the peak, host_bytes}, integers >= 0;
//                         chunks: the rank's stage's [begin, end) layer ranges, in the order it holds them
//                         (with interleave v, the model's chunks stage, stage + stages, …)
//   steps        list     non-empty; each {step, loss, lr, grad_norm, iteration_s, tokens_per_s, gflops,
//                         val_loss (optional), ops_s: seconds by op, components_s: one number of seconds
//                         per name in kComponentNames (model/breakdown.h, the mean over ranks),
//                         ranks (optional): one per rank of the run {rank, stage, components_s (every name, as the
//                         step's), tp_comm_by_kind_s, iteration_s}; the report checks each rank's seconds}
// Readers ignore keys they do not know, so a key may be added without
// breaking older readers; a key is never renamed.
#pragma once

#include <array>

namespace axo::run_json {

inline constexpr const char* kModel = "model";
inline constexpr const char* kBackend = "backend";
// Its values: the executor's backends (a machine profile says "cpu" or "gpu" of the same).
inline constexpr const char* kCpuBackend = "cpu";
inline constexpr const char* kCudaBackend = "cuda";
inline constexpr const char* kRanks = "ranks";
inline constexpr const char* kGrid = "grid";
// The grid's settings a run.json records beside its dimensions, by their --fix names
// (model/config_fields.h): a report pairs a run with a plan only where they agree.
inline constexpr std::array<const char*, 7> kGridSettings = {"context",          "zero",  "interleave", "recompute",
                                                             "recompute_layers", "sequence_parallel", "order"};
// The tensor-parallel overlaps the run ran (train --overlap, else the plan's): "on" (all three),
// "off" (none), or those it ran ("oar,oag"); a report compares them with the plan's where each
// acts (model/overlap.h).
inline constexpr const char* kOverlap = "overlap";
inline constexpr const char* kSchedule = "schedule";
inline constexpr const char* kPipeline = "pipeline";
inline constexpr const char* kSplit = "split";
inline constexpr const char* kChunks = "chunks";
inline constexpr const char* kNode = "node";
inline constexpr const char* kCores = "cores";
inline constexpr const char* kBatch = "batch";
inline constexpr const char* kMicrobatch = "microbatch";
inline constexpr const char* kSeq = "seq";
inline constexpr const char* kParameters = "parameters";
inline constexpr const char* kPrecision = "precision";
inline constexpr const char* kPlannedPrecision = "planned_precision";

inline constexpr const char* kMemory = "memory";
inline constexpr const char* kOffload = "offload";
inline constexpr const char* kDeviceLimitBytes = "device_limit_bytes";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kStage = "stage";
inline constexpr const char* kDevicePeakBytes = "device_peak_bytes";
inline constexpr const char* kDeviceAtPeakBytes = "device_at_peak_bytes";
inline constexpr const char* kHostBytes = "host_bytes";

inline constexpr const char* kSteps = "steps";
inline constexpr const char* kStep = "step";
inline constexpr const char* kLoss = "loss";
inline constexpr const char* kLr = "lr";
inline constexpr const char* kGradNorm = "grad_norm";
inline constexpr const char* kIterationS = "iteration_s";
inline constexpr const char* kTokensPerS = "tokens_per_s";
inline constexpr const char* kGflops = "gflops";
inline constexpr const char* kValLoss = "val_loss";
inline constexpr const char* kOpsS = "ops_s";
inline constexpr const char* kComponentsS = "components_s";
inline constexpr const char* kTpCommByKindS = "tp_comm_by_kind_s";

}  // namespace axo::run_json
