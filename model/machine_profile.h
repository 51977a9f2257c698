// What a machine can do, as the cost model needs it: compute rates, memory,
// links and (optionally) measured collective and GEMM tables.
//
// The same schema is written by `axo calibrate` and by hand in the presets of
// configs/machines/; the two are interchangeable. Units are in the field
// names: GB/s means 1e9 bytes per second (as nccl-tests), GiB means 2^30
// bytes, us means microseconds.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/transformer_spec.h"

namespace axo {

enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, broadcast, send_recv };

// How the training stack runs the attention core (a property of the software,
// not of the GPU): `materialized` writes the [s × s] scores and probabilities
// to memory between separate GEMM and softmax kernels (Megatron-LM 2022, axo's
// own executor); `flash` fuses them into one tiled kernel that keeps them on
// chip (FlashAttention-2, Dao 2023, arXiv 2307.08691: llm-foundry attn_impl
// flash, torchtitan's SDPA, NeMo / Megatron-Core through Transformer Engine).
// `flash3` is the Hopper-native fused kernel (FlashAttention-3, Shah et al.
// 2024, arXiv 2407.08608; cuDNN's fused attention, which Transformer Engine
// runs in NeMo / Megatron-Core): asynchronous wgmma and TMA make it 1.5-2.0x
// FlashAttention-2 on H100 (gemm.flash3_speedup); elsewhere it runs as flash.
enum class AttentionKind { materialized, flash, flash3 };
// Whether the kernel keeps the scores on chip (flash, flash3).
inline bool fused(AttentionKind kind) { return kind != AttentionKind::materialized; }
const char* to_string(AttentionKind kind);
AttentionKind parse_attention_kind(const std::string& text, const std::string& where);

// How the training stack all-gathers Z-sharded weights (and reduce-scatters
// their gradients): `per_linear`, one collective per linear layer (AxoNN's 4D
// layer, axo's executor); `per_block`, one collective per transformer block of
// all its weights flattened together (PyTorch FSDP's FlatParameter, one per
// wrapped module: Zhao et al. 2023, arXiv 2304.11277, section 3; llm-foundry
// wraps each MPTBlock, torchtitan fully_shard()s each TransformerBlock). Same
// bytes; a quarter of the collectives, so a quarter of their latency.
enum class WeightGather { per_linear, per_block };
const char* to_string(WeightGather gather);

// How the training stack holds the fp8 copies of the linear weights (precision
// fp8, model/cost_fp8.h; Hopper's fp8 GEMMs need each weight and its transpose):
// `cached`, an fp8 weight and transpose per linear layer kept for the whole
// iteration beside the 2-byte weights (Transformer Engine with
// is_first_microbatch, as Megatron-Core passes it: recast on the first
// microbatch only); `primary`, the weights themselves are fp8, their fp32
// masters in the optimizer (Megatron --fp8-param-gather: NeMo's
// bf16_with_fp8_mixed sets fp8_param_gather=True), so the transpose cache
// replaces the 2-byte copy; `transient`, cast in each forward and freed after
// the layer (torchao's Float8Linear in torchtitan; Transformer Engine called
// without is_first_microbatch, as llm-foundry's amp_fp8 does); `gathered`,
// transient, but a Z-sharded weight is cast to fp8 on its shard and all-gathered
// in fp8 with scales computed once per iteration (torchao's
// enable_fsdp_float8_all_gather with precompute_float8_dynamic_scale_for_fsdp,
// torchtitan's quantize.linear.float8 options: torchao float8/fsdp_utils.py,
// WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather).
enum class Fp8Weights { cached, primary, transient, gathered };
const char* to_string(Fp8Weights weights);
// Where the fp8 casts of a block's linear inputs and output gradients run
// (precision fp8, model/cost_fp8.h): `fused`, in the kernel that produces the
// tensor wherever one can write fp8: Transformer Engine's LayerNormLinear and
// LayerNormMLP write the normalized qkv and fc1 inputs and the activated fc2
// input in fp8, and fc1's output gradient leaves the activation's backward
// cast and transposed (Megatron-Core's TE layer spec; torch.compile's Inductor
// fuses torchao Float8Linear's casts into the producing pointwise ops the same
// way), so only the attention output and the other output gradients are cast
// on their own; `separate`, every input and output gradient cast by a kernel
// of its own (Transformer Engine's te.Linear swapped in for nn.Linear beside
// PyTorch's norms, as llm-foundry's amp_fp8 does).
enum class Fp8Casts { fused, separate };
const char* to_string(Fp8Casts casts);
// Where the amaxes that scale the fp8 tensors are all-reduced (precision fp8,
// model/cost_fp8.h): `stage`, Transformer Engine's delayed scaling: every amax
// its fp8_autocast region took in one fused, blocking all-reduce over the
// region's fp8_group as the region's forward ends, and the output gradients'
// as its backward ends (FP8GlobalStateManager.reduce_and_update_fp8_tensors,
// torch.distributed.all_reduce(async_op=False)); Megatron-Core opens the region
// around a transformer block, one model chunk (TransformerBlock.forward), with
// the tensor × data × context group (parallel_state.get_amax_reduction_group(
// with_context_parallel=True), tp_only_amax_red off by default), llm-foundry
// around the whole model with TE's default group, every rank: in axo's grid,
// every rank of a pipeline stage. `tensor`, torchao's dynamic scaling
// (torchtitan's float8): each tensor's amax taken as it is cast and all-reduced
// over the tensor-parallel group alone (tensor_to_amax of a DTensor), per layer.
enum class Fp8Amax { stage, tensor };
const char* to_string(Fp8Amax amax);
// How the stack's loss holds the logits: `fp32_copy`, the 2-byte logits plus an
// fp32 copy for the softmax (Megatron-LM's vocab-parallel cross entropy on
// logits.float(), torchtitan's F.cross_entropy(pred.float())); `fused`, a
// kernel that reads the 2-byte logits, keeps one log-sum-exp per token and
// writes the gradient in place (flash-attn's cross_entropy with
// inplace_backward, llm-foundry's default loss_fn fused_crossentropy). Memory
// only: the loss's time is the same 2e + 16 bytes per logit for both, as the
// published runs bear out (configs/validation/README.md: each kernel's own pass
// count took the corpus further from its measurements).
enum class LossKind { fp32_copy, fused };
const char* to_string(LossKind loss);
// What selective recompute keeps (recompute=selective): `attention`, every
// activation but the attention core's (Korthikanti et al. 2022, section 5:
// Megatron-LM, NeMo); `per_op`, only the outputs of every other matmul and of
// the attention kernel plus the block's input, the rest recomputed in backward
// (torchtitan's op-level selective checkpointing: _save_list of aten.mm and
// the SDPA kernels, "except every second mm", torchtitan
// torchtitan/models/llama3/parallelize_llama.py).
enum class SelectiveKind { attention, per_op };
const char* to_string(SelectiveKind kind);
// The optimizer state's precision per parameter: `fp32`, master weights and
// both Adam moments in fp32 (12 bytes; ZeRO, Rajbhandari et al.); `bf16`, all
// three in bf16 (6 bytes: Apex DistributedFusedAdam's dtype, "datatype for
// optimizer state", set to bf16 by NeMo recipes with optim.dtype: bf16).
enum class OptimizerState { fp32, bf16 };
const char* to_string(OptimizerState state);
// What a layer keeps for its backward, and what the backward holds besides:
// `korthikanti`, the tensors of Korthikanti et al. 2022 (arXiv 2205.05198,
// Table 2) as Megatron-LM keeps them, the backward's own buffers left to the
// profile's reserved memory; `axo`, axo's own executor (llm.c's layout,
// executor/parallel/gpt_stage.cc): six hidden-space tensors a layer and the
// layer norms' statistics, each chunk's input, and, in fp32, one layer's
// activation gradients, the attention probabilities' gradient and, where it
// computes 2-byte activations or recomputes, one layer's rolling fp32 view
// (model/axo_activations.h), and its tensor-parallel layers' buffers and Z pools
// (model/axo_buffers.h); it also holds the executor's parameters (model/axo_parameters.h),
// which the cost model prices too (keeps_whole_over_z, model/cost_collective.h).
// A calibration writes `axo`: it measured the executor.
enum class ActivationLayout { korthikanti, axo };
const char* to_string(ActivationLayout layout);
class YamlMap;
// A mapping's `attention` key (a clear error names the choices; `source` names the file).
AttentionKind parse_attention(const YamlMap& map, const std::string& source);
// The stack mapping's `fp8_weights`, `fp8_casts`, `fp8_amax`, `loss`, `selective` and `optimizer_state`
// keys (a clear error names the choices).
Fp8Weights parse_fp8_weights(const YamlMap& map);
Fp8Casts parse_fp8_casts(const YamlMap& map);
Fp8Amax parse_fp8_amax(const YamlMap& map);
LossKind parse_loss_kind(const YamlMap& map);
SelectiveKind parse_selective_kind(const YamlMap& map);
OptimizerState parse_optimizer_state(const YamlMap& map);
// How the training stack runs the memory-bound ops between the GEMMs (norms,
// the MLP activation, rotary embedding, the attention kernel's input and
// output layout): `fused`, each in one kernel that reads its inputs and writes
// its output once (Megatron-LM / Transformer Engine: Apex's fused layer norm,
// bias-GeLU and bias-dropout-add fusions, TE's fused RMSNorm, SwiGLU and
// rotary kernels; torch.compile's Inductor does the same); `eager`, as eager
// PyTorch runs the model's Python: one kernel per operator, each reading and
// writing HBM (model/cost_elementwise.h counts the bytes: llm-foundry's
// MPTBlock, torchtitan's Llama without torch.compile).
enum class ElementwiseKind { fused, eager };

// When an FSDP stack (weight_gather per_block) all-gathers the next block's
// weights in backward (PyTorch FSDP's BackwardPrefetch): `pre`, before the
// current block's gradient computation, so the gather hides under it
// (BACKWARD_PRE; FSDP2 and torchtitan prefetch explicitly); `post`, after it,
// so the gather overlaps only the current block's reduce-scatter and the next
// block's backward waits for it: exposed (BACKWARD_POST, Composer's default,
// composer/distributed: fsdp_config.get('backward_prefetch', 'BACKWARD_POST'),
// which llm-foundry's MPT yamls keep; PyTorch's FSDP docs: "This enables less
// overlap but requires less memory usage").
enum class BackwardPrefetch { pre, post };
const char* to_string(BackwardPrefetch prefetch);
// How the training stack runs the tensor-parallel collectives of the backward
// pass: `overlapped`, each dX all-reduce (or sequence-parallel reduce-scatter
// and input re-gather) issued asynchronously under the same layer's other
// backward GEMM (Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication,
// Megatron-Core's tensor_parallel API guide; torchtitan's async TP); `exposed`,
// each on the critical path, the next GEMM waiting for it: eager PyTorch
// DTensor TP, whose Colwise/Rowwise/SequenceParallel redistributions
// all-gather before and reduce-scatter after the GEMMs that depend on them.
// Hiding them needs torch.compile's micro-pipelined async TP over
// SymmetricMemory (torchtitan --parallelism.enable_async_tensor_parallel), up
// to ~8% end to end on Llama3 7B and 70B ("[Distributed w/ TorchTitan]
// Introducing Async Tensor Parallelism in PyTorch", PyTorch dev-discuss 2024,
// https://discuss.pytorch.org/t/distributed-w-torchtitan-introducing-async-tensor-parallelism-in-pytorch/209487).
// The forward's TP collectives are on the critical path either way (model/cost_tp_comm.h).
enum class TpCollectives { overlapped, exposed };
const char* to_string(TpCollectives collectives);
// The dtype a stack reduces its gradients in (PyTorch FSDP's MixedPrecision reduce_dtype,
// Megatron's grad_reduce_in_fp32): `compute`, the model's precision (Composer's `mixed_precision:
// PURE`; NeMo's performance recipes, grad_reduce_in_fp32 = False); `fp32`, 4 bytes per element,
// held in fp32 where the weights are whole over Z (memory_model.h): Megatron-LM's training script
// under bf16 (core_r0.8.0 megatron/training/arguments.py), torchtitan's
// training.mixed_precision_reduce (default "float32"), and Composer's `DEFAULT` from 0.16.4
// (composer/trainer/mosaic_fsdp_utils.py: "param_dtype = <precision>, reduce_dtype =
// torch.float32, buffer_dtype = <precision>"), the version llm-foundry pinned when it published
// its H100 and A100-80 tables (setup.py @b2a43a14: mosaicml>=0.16.4,<0.17).
// `fp32_copy`, 4 bytes per element on the wire, the gradients held in the model's precision: axo's
// executor (executor/parallel/parallel_gpt.cc and zero_optimizer.cc copy 2-byte gradients to fp32
// to reduce them; linear_4d.cc computes each Z block's dW in fp32 and reduce-scatters it so).
enum class ReduceDtype { compute, fp32, fp32_copy };
const char* to_string(ReduceDtype dtype);
// Bytes per gradient element reduced in `dtype`, `element_bytes` being the model's.
inline double reduce_dtype_bytes(ReduceDtype dtype, double element_bytes) {
  return dtype == ReduceDtype::compute ? element_bytes : 4.0;
}
// Bytes per gradient element a stack holds where the weights are whole over Z: fp32's 4, else the
// model's (memory_model.h).
inline double held_gradient_bytes(ReduceDtype dtype, double element_bytes) {
  return dtype == ReduceDtype::fp32 ? 4.0 : element_bytes;
}
// The dtype a stack's activation collectives (the tensor-parallel partial sums, dX, gathered rows,
// the context ring's keys and values) and pipeline messages move: `compute`, the model's precision
// (Megatron-LM, NeMo, PyTorch's DTensor and pipelining send the tensors they compute); `fp32`, 4
// bytes whatever the training precision: axo's executor, whose 2-byte training computes in fp32
// views and communicates those (executor/parallel/linear_4d.cc, pipeline_schedule.cc,
// ring_attention.cc, vocab_parallel_head.cc).
enum class ActivationCommDtype { compute, fp32 };
const char* to_string(ActivationCommDtype dtype);
inline double activation_comm_bytes(ActivationCommDtype dtype, double element_bytes) {
  return dtype == ActivationCommDtype::fp32 ? 4.0 : element_bytes;
}
const char* to_string(ElementwiseKind kind);
// The copies an FSDP stack makes through HBM around its collectives, outside the GEMMs, every
// microbatch (model/cost_fsdp_copies.h prices them): `none`, the collectives read and write the
// buffers the GEMMs use (Megatron's distributed optimizer, AxoNN, DeepSpeed ZeRO);
// `flat_parameter`, PyTorch FSDP1's FlatParameter (llm-foundry's Composer): the parameters'
// gradients concatenated into the flat gradient, cast to the reduce dtype and pre-divided;
// `per_parameter`, FSDP2's per-parameter DTensor shards (torchtitan): each all-gather copied
// out into the parameters, the gradients copied into the reduce-scatter buffer.
enum class FsdpCopies { none, flat_parameter, per_parameter };
const char* to_string(FsdpCopies copies);
// When the stack reduces the data-parallel gradients: `overlapped`, bucket by bucket as the last
// microbatch's backward finishes each layer (PyTorch DDP's buckets, FSDP, Megatron-Core's
// --overlap-grad-reduce and --overlap-param-gather, NeMo's overlap_grad_sync); `after_backward`,
// once the whole backward is done, on the critical path, the distributed optimizer's parameter
// all-gather after the step as well (Megatron-LM before Megatron-Core's overlap, Narayanan et al.
// 2021 and Korthikanti et al. 2022: megatron/training.py's train_step calls the model's
// allreduce_gradients, later optimizer.reduce_model_grads, after forward_backward_func returns).
enum class GradReduce { overlapped, after_backward };
const char* to_string(GradReduce reduce);
// How an overlapped data-parallel reduction cuts the gradients into collectives, each paying
// the group's latency (model/cost_data_parallel.h): `per_layer`, one per transformer layer
// (axo's own executor, executor/parallel/shard_layout.h's buckets; PyTorch FSDP's units, one
// per wrapped block in llm-foundry and torchtitan); `megatron_core`, buckets of
// max(40M, 1M × data-parallel size) parameters (Megatron-Core's DistributedDataParallel default
// bucket_size, "larger DP sizes need larger buckets to ensure collectives do not become
// latency-bound", megatron/core/distributed/distributed_data_parallel_config.py; NeMo runs it);
// `pytorch_ddp`, buckets of 25 MiB of gradients (torch.nn.parallel.DistributedDataParallel's
// bucket_cap_mb). A reduction after the backward (grad_reduce) is one collective.
enum class GradBuckets { per_layer, megatron_core, pytorch_ddp };
const char* to_string(GradBuckets buckets);
// How each microbatch's weight gradients join the iteration's (model/cost_grad_accumulation.h):
// `fused`, the weight-gradient GEMMs accumulate into the gradient buffer (Megatron-LM's
// gradient_accumulation_fusion, on by default since February 2022, Megatron-LM 83b1e42f; Transformer
// Engine's fuse_wgrad_accumulation; FSDP's per-microbatch reduce-scatter leaves a shard); `separate`,
// autograd writes each gradient and a kernel per parameter adds it into the buffer: Megatron-LM's
// local DistributedDataParallel of 2021 (megatron/model/distributed.py at 6985e589, the commit of
// Narayanan et al.'s Table 1 script: a hook runs param.main_grad.add_(param.grad.data) for every
// parameter, every microbatch).
enum class GradAccumulation { fused, separate };
const char* to_string(GradAccumulation accumulation);
// The stack mapping's `elementwise`, `backward_prefetch`, `tp_collectives`, `reduce_dtype`,
// `activation_comm_dtype`, `fsdp_copies`, `grad_reduce`, `grad_buckets` and `grad_accumulation`
// keys (a clear error names the choices).
ElementwiseKind parse_elementwise_kind(const YamlMap& map);
BackwardPrefetch parse_backward_prefetch(const YamlMap& map);
TpCollectives parse_tp_collectives(const YamlMap& map);
ReduceDtype parse_reduce_dtype(const YamlMap& map);
ActivationCommDtype parse_activation_comm_dtype(const YamlMap& map);
FsdpCopies parse_fsdp_copies(const YamlMap& map);
GradReduce parse_grad_reduce(const YamlMap& map);
GradBuckets parse_grad_buckets(const YamlMap& map);
GradAccumulation parse_grad_accumulation(const YamlMap& map);
const char* to_string(CollectiveOp op);
CollectiveOp parse_collective_op(const std::string& text, const std::string& where);

// One measured GEMM: C[m,n] = A[m,k]·B[k,n] ran at `tflops`.
struct GemmSample {
  Precision precision = Precision::bf16;
  int64_t m = 0, n = 0, k = 0;
  double tflops = 0;
};

// One piece of a piecewise latency/bandwidth fit: for messages up to
// max_bytes, time = alpha + ring-factor · bytes / bus_bandwidth.
struct LinkSegment {
  double max_bytes = 0;  // +inf for the last segment
  double alpha_us = 0;
  double bus_bandwidth_GBps = 0;
};

// A fitted collective for one group shape: `group_size` ranks of which
// `ranks_per_node` share each node, all groups of that shape running at once.
struct CollectiveFit {
  CollectiveOp op = CollectiveOp::all_reduce;
  int64_t group_size = 0;
  int64_t ranks_per_node = 0;
  std::vector<LinkSegment> segments;  // by increasing max_bytes
};

// The schema's floors of peak_tflops and hbm_bandwidth_GBps, which a calibration that measured no
// GEMM or no bandwidth writes.
inline constexpr double kUnmeasuredTflops = 1e-9;
inline constexpr double kUnmeasuredBandwidthGBps = 1e-6;
// 419 / (54 days · 24 h · 16,384 GPUs) = 1.973e-5 interruptions per GPU-hour.
inline constexpr double kLlama3FailuresPerGpuHour = 419.0 / (54.0 * 24.0 * 16384.0);

// The training stack's settings (a profile's `stack` section, a validation
// corpus machine entry): what the software does that changes time or memory,
// each default Megatron-LM's or axo's own executor's (see each enum above).
struct StackSettings {
  AttentionKind attention = AttentionKind::materialized;        // stack.attention
  WeightGather weight_gather = WeightGather::per_linear;        // stack.weight_gather
  Fp8Weights fp8_weights = Fp8Weights::cached;                  // stack.fp8_weights
  Fp8Casts fp8_casts = Fp8Casts::fused;                         // stack.fp8_casts
  Fp8Amax fp8_amax = Fp8Amax::stage;                            // stack.fp8_amax
  LossKind loss = LossKind::fp32_copy;                          // stack.loss
  SelectiveKind selective = SelectiveKind::attention;           // stack.selective
  OptimizerState optimizer_state = OptimizerState::fp32;        // stack.optimizer_state
  ElementwiseKind elementwise = ElementwiseKind::fused;         // stack.elementwise
  BackwardPrefetch backward_prefetch = BackwardPrefetch::pre;   // stack.backward_prefetch
  TpCollectives tp_collectives = TpCollectives::overlapped;     // stack.tp_collectives
  ReduceDtype reduce_dtype = ReduceDtype::compute;              // stack.reduce_dtype
  ActivationCommDtype activation_comm_dtype = ActivationCommDtype::compute;  // stack.activation_comm_dtype
  FsdpCopies fsdp_copies = FsdpCopies::none;                    // stack.fsdp_copies
  GradReduce grad_reduce = GradReduce::overlapped;              // stack.grad_reduce
  GradBuckets grad_buckets = GradBuckets::per_layer;            // stack.grad_buckets
  GradAccumulation grad_accumulation = GradAccumulation::fused;  // stack.grad_accumulation
  ActivationLayout activations = ActivationLayout::korthikanti;  // stack.activations
};
// A mapping's stack keys (attention required, the others over the defaults);
// a wrong choice names the key and its choices.
StackSettings read_stack_settings(const YamlMap& map, const std::string& source);
// A mapping's optional `stack:` section (a machine profile's, a validation set's or point's):
// its settings, unknown keys refused; nothing when the mapping has none.
std::optional<StackSettings> read_stack_section(const YamlMap& map, const std::string& source);

// The collective library's low-latency protocol (NCCL's LL): each 8-byte line
// carries 4 bytes of data and a flag the receiver polls, so a step costs well
// under a microsecond where the simple protocol waits on a chunk's flush, at a
// fraction of the bandwidth and never above a cap of its own (comm_model.h):
// a base latency per collective; a ring step on the node's links and across
// the network, and a tree level across it; the least a ring step costs once
// the ring spans nodes (NCCL's netOverhead: the host posts each step to the
// NIC); the bus bandwidth it tops out at inside a node, across two nodes and
// across more.
// Absent: priced on the simple protocol's alpha_us alone, as MPI between CPU
// ranks runs, and as a calibration's measured fits already hold (a GPU
// calibration times NCCL's small messages on whatever protocol it took).
struct LowLatencyProtocol {
  double base_us = 0;
  double intra_step_us = 0;
  double inter_step_us = 0;
  double tree_inter_step_us = 0;
  double net_overhead_us = 0;
  double intra_bus_GBps = 0;
  double two_node_bus_GBps = 0;  // a group over two nodes (NCCL's own cap there)
  double inter_bus_GBps = 0;     // over more
  bool present() const { return base_us > 0; }
};

struct MachineProfile : StackSettings {
  std::string name;
  std::string source;
  std::string backend = "gpu";    // gpu or cpu: which executor backend it describes
  // The GPU type as the validation corpus names it (configs/validation/public-runs.yaml,
  // `gpu`: A100-80, H100-80 ...): its published runs give the predictions' error band
  // (planner/prediction_band.h). Empty: none (a calibrated CPU profile), no band.
  std::string gpu_type;
  // Why a calibration stopped before its end (metadata.complete: false, and metadata.error):
  // what it did not measure is estimated. Empty for a whole profile.
  std::string incomplete;
  // The nodes a calibration measured (metadata.ranks / metadata.ranks_per_node); 0: not a
  // calibration's. On one node its inter_node figures are the intra-node link's, estimated.
  int64_t calibrated_nodes = 0;
  int64_t gpus_per_node = 1;      // devices (or ranks, on CPU) per node: what ranks fill before the network
  // Devices of one host (a Slurm node), where a node is several hosts sharing one NVLink domain
  // (GB200 NVL72: 4 per compute tray); it divides gpus_per_node. 0: absent, a node is one host.
  int64_t gpus_per_host = 0;
  int64_t host_gpus() const { return gpus_per_host > 0 ? gpus_per_host : gpus_per_node; }
  double device_memory_GiB = 0;   // per device
  double reserved_memory_GiB = 0; // runtime, allocator fragmentation, libraries
  double peak_tflops_fp32 = 0;
  double peak_tflops_fp16 = 0;     // 0: absent from the profile (a model in fp16 is refused: cost_fp8.h)
  double peak_tflops_bf16 = 0;     // likewise
  double peak_tflops_fp8 = 0;     // dense fp8 GEMMs (peak_tflops.fp8); 0: the device has no fp8 rate
  double hbm_bandwidth_GBps = 0;
  // Achieved fraction of HBM bandwidth by memory-bound kernels (layernorm, softmax, GELU).
  double memory_bound_efficiency = 0.7;
  double kernel_launch_us = 5;
  // GEMM: the best fraction of peak large GEMMs reach, and measured samples.
  double gemm_max_efficiency = 0.8;
  // A GEMM dimension d scales efficiency by d / (d + gemm_half_efficiency_dim):
  // small dimensions under-fill the device's tiles (a roofline refinement); with
  // gemm.sm_count, an m or n under one tile counts as the tile (gemm_model.h).
  double gemm_half_efficiency_dim = 32;
  // Streaming multiprocessors (gemm.sm_count): a GEMM's output tiles run in
  // waves of one tile per SM, and a last wave that fills only part of the SMs
  // leaves the rest idle (wave quantization, model/gemm_model.h). 0: not a
  // tiled device (CPU profiles), no quantization.
  int64_t gemm_sm_count = 0;
  std::vector<GemmSample> gemm_table;
  // The training stack (StackSettings, the base) and, for flash attention,
  // the fraction of the peak its fused kernel reaches on useful FLOPs
  // (gemm.attention_efficiency; FlashAttention-2 reaches 50-73% of A100's
  // peak forward, less backward: Dao 2023, section 4.1).
  double attention_efficiency = 0.5;
  // How much faster a flash3 stack's kernel runs than FlashAttention-2 on this
  // GPU (gemm.flash3_speedup): 1 where the GPU lacks Hopper's wgmma and TMA.
  double flash3_speedup = 1.0;
  // Links: intra-node (NVLink/NVSwitch, shared memory) and the node's NICs.
  double intra_alpha_us = 5;
  double intra_bus_bandwidth_GBps = 0;
  // GPUs linked pair by pair without a switch (Perlmutter's 4 NVLinks between every pair): one
  // pair's link per direction, which caps a group of k on the node at (k − 1) of them
  // (comm_model.cc); 0 where a switch gives every group the node's bandwidth.
  double intra_pair_bandwidth_GBps = 0;
  double inter_alpha_us = 10;
  int64_t nics_per_node = 1;
  double nic_bandwidth_GBps = 0;  // per NIC per direction
  LowLatencyProtocol low_latency;  // the `low_latency` section; absent: none
  double host_to_device_GBps = 0;
  double device_to_host_GBps = 0;
  // Adam steps on the host, parameters per second per device's share of the CPU.
  double cpu_optimizer_params_per_s = 0;
  // The fraction of an overlapped collective's time that hides under compute:
  // 1 for a device with its own communication engine (NCCL on a separate
  // stream); near 0 for MPI between CPU ranks, which progresses only inside
  // MPI calls (calibrate measures it).
  double overlap_efficiency = 1.0;
  // The fraction of its speed compute loses while an overlapped collective is
  // in flight beside it: NCCL's kernels hold SMs (one CTA per channel) and
  // HBM bandwidth the GEMMs would use, and a GEMM sized to whole waves of SMs
  // spills a tail wave (overlap_interference; cost_collective.h). 0: none.
  double overlap_interference = 0;
  // Collectives inside a training step take this many times their calibrated
  // time (ranks arriving apart, cores shared with compute); 1 unless refined
  // from measured runs (axo report / refine).
  double collective_slowdown = 1.0;
  std::vector<CollectiveFit> collectives;  // measured fits (calibrate)
  // Failures and checkpoints (model/goodput.h). Interruptions of the whole
  // job per GPU-hour: by default Llama 3's 419 unexpected interruptions in
  // 54 days on 16,384 H100 (arXiv 2407.21783, section 3.3.4).
  double failures_per_gpu_hour = kLlama3FailuresPerGpuHour;
  // The bandwidth a job writes and reads checkpoints at: by default Llama 3's
  // Tectonic file system, 2 TB/s sustained (same paper, section 3.3.1).
  double checkpoint_filesystem_GBps = 2000;
  // From a failure to training again, without reading the checkpoint back
  // (rescheduling, process start, communicator set-up): an estimate.
  double restart_s = 600;

  double peak_tflops(Precision precision) const;
  double usable_memory_bytes() const;
};

MachineProfile machine_profile_from_yaml(const YAML::Node& node, const std::string& source);
MachineProfile load_machine_profile(const std::string& path);
// "" for a whole profile; else a line saying the profile at `path` is a partial calibration and why.
std::string partial_calibration_note(const MachineProfile& profile, const std::string& path);
// "" unless `profile` is a partial calibration that stopped before it measured a GEMM or the memory
// bandwidth: its peak_tflops.fp32 or hbm_bandwidth_GBps are then the schema's floors (calibrate's
// build_profile), not rates, and nothing can be priced on it; else why, naming `path`.
std::string unmeasured_rates_problem(const MachineProfile& profile, const std::string& path);
// "Note: PATH was calibrated on one node: ..." where a plan of `gpus` spans more nodes than
// `profile`'s calibration measured one of; "" otherwise.
std::string one_node_calibration_note(const MachineProfile& profile, const std::string& path, int64_t gpus);
// Writes every field; `extra` (raw measurements, metadata) is copied in as is.
YAML::Node to_yaml(const MachineProfile& profile, const YAML::Node& extra = YAML::Node());

}  // namespace axo
