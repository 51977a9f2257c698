// The data-parallel gradient all-reduce (see cost_data_parallel.h).
#include "model/cost_data_parallel.h"

#include <algorithm>
#include <cmath>

#include "model/cost_collective.h"
#include "model/cost_context.h"
#include "model/memory_model.h"

namespace axo {

namespace {

// The tied embedding's gradient, summed by the first and the last stage in the gradients' reduce
// precision (Megatron's _allreduce_word_embedding_grads sums the main_grad buffers).
double tied_embedding_all_reduce(const CostInputs& in, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  if (c.pipeline == 1 || !in.spec.tied_embeddings) return 0;
  // The pair is the pipeline group's ends: on one node where every pipeline group is.
  const GroupPlacement pair = neighbour_pair(
      place_group(c.pipeline, c.stride(GridDim::pipeline), in.machine.gpus_per_node, c.gpus()));
  const double bytes =
      double(in.spec.vocab) * double(in.spec.hidden) / double(c.x * c.y * c.z) * reduced_gradient_bytes(in);
  const double t = collective_seconds(in.machine, CollectiveOp::all_reduce, pair, bytes);
  return record.exposed_collective(CostScope::step, CostPhase::step,
                                   "all_reduce tied embedding gradient (first and last stage)", GridDim::pipeline, 2,
                                   pair.ranks_per_node, bytes, t);
}

// PyTorch DDP's default bucket_cap_mb (torch.nn.parallel.DistributedDataParallel).
constexpr double kPytorchDdpBucketBytes = 25.0 * (1 << 20);

// The collectives an overlapped reduction of the stage's gradients runs, each
// paying the group's latency (stack.grad_buckets): one per layer, Megatron-Core's
// max(40M, 1M × data-parallel size) parameters or PyTorch DDP's 25 MiB per
// bucket; one after the backward.
double reduction_buckets(const CostInputs& in, double local_params, double layers) {
  if (in.machine.grad_reduce == GradReduce::after_backward) return 1;
  switch (in.machine.grad_buckets) {
    case GradBuckets::megatron_core: {
      const double data_parallel = double(in.config.data * in.config.context);
      return std::ceil(local_params / std::max(40e6, 1e6 * data_parallel));
    }
    case GradBuckets::pytorch_ddp:
      return std::ceil(local_params * reduced_gradient_bytes(in) / kPytorchDdpBucketBytes);
    default:
      return std::max(1.0, layers);
  }
}

// A layer's backward and recompute (and its forward too, `whole`) that the gradients' reduction may
// run under: less the attention its ring hides under (ring_windows, cost_context.h), whose share of
// a partial recompute is at most the recompute the paced layer holds.
double free_compute(const CostInputs& in, const LayerCompute& layer, bool whole) {
  const RingWindows ring = ring_windows(in, layer);
  const double backward = layer.backward + layer.recompute - ring.backward - std::min(ring.recompute, layer.recompute);
  return std::max(0.0, backward + (whole ? layer.forward - ring.forward : 0.0));
}

// Of `window` seconds of compute, the part a reduction in `buckets` runs
// under: all but the last bucket's; none where the stack reduces after the backward.
double overlap_window(const CostInputs& in, double buckets, double window) {
  if (in.machine.grad_reduce == GradReduce::after_backward) return 0;
  return window * (buckets - 1) / buckets;
}

// Of a collective of `t` seconds in `buckets` under `window` seconds of
// compute, what stays exposed: the last bucket always (it is ready only when
// the window ends); all of it where the stack reduces after the backward.
double bucketed_exposed(const CostInputs& in, double t, double buckets, double window) {
  const double all_but_last = (buckets - 1) / buckets;
  return t - hidden_seconds(in.machine, t * all_but_last, overlap_window(in, buckets, window));
}

// Without ZeRO: the gradient all-reduce under the last microbatch's backward.
void all_reduce_gradients(const CostInputs& in, double n, const LayerCompute& layer, const CostRecorder& record,
                          DataParallelStep& dp) {
  const Collective gradients{CostScope::step, CostPhase::step, CollectiveOp::all_reduce, GridDim::data,
                             dp.local_params, reduced_gradient_bytes(in), "gradients"};
  const double buckets = reduction_buckets(in, dp.local_params, n);
  const TimedCollective timed = time_collective(in, gradients, buckets);
  if (timed.seconds == 0) return;
  dp.all_reduce = timed.seconds;
  const double backward = n * free_compute(in, layer, false);
  dp.window = overlap_window(in, buckets, backward);
  dp.exposed = dp.last_exposed = bucketed_exposed(in, timed.seconds, buckets, backward);
  record_collective(in, record, gradients, timed, dp.exposed);
}

// Bytes per element of the updated parameters' all-gather. Kept in fp8
// (stack.fp8_weights: primary), a block's linear weights are gathered in fp8,
// 1 byte: Megatron-Core's --fp8-param-gather "keep[s] the compute param in fp8
// ... and perform[s] the param all-gather in fp8" (megatron/training/
// arguments.py), which NeMo's fp8 recipes turn on (fp8_param_gather). Norms,
// biases and the embedding or LM head move the model's element bytes.
double gathered_parameter_bytes(const CostInputs& in, double stage_layers, double local_params) {
  const double e = in.shapes.element_bytes;
  if (in.spec.precision != Precision::fp8 || in.machine.fp8_weights != Fp8Weights::primary) return e;
  const double fp8_elements = std::min(local_params, stage_layers * in.shapes.block_weights() / double(in.config.z));
  return (fp8_elements * 1.0 + (local_params - fp8_elements) * e) / local_params;
}

// ZeRO 1 and 2 (Megatron's --overlap-grad-reduce, --overlap-param-gather):
// the gradients' reduce-scatter under the backward (with zero=1 once, under
// the last microbatch's; with zero=2 after every microbatch, since no rank
// keeps the whole gradient, each earlier one hiding under the next
// microbatch's forward and backward), and the updated parameters' all-gather
// under the next iteration's first forward. Together the bytes of the
// all-reduce (REFERENCE-DATA.md, "Sharded optimizer").
void shard_over_data(const CostInputs& in, double n, const LayerCompute& layer, const CostRecorder& record,
                     DataParallelStep& dp) {
  const Collective gradients{CostScope::step, CostPhase::step, CollectiveOp::reduce_scatter, GridDim::data,
                             dp.local_params, reduced_gradient_bytes(in), "gradients"};
  const Collective parameters{CostScope::step, CostPhase::step, CollectiveOp::all_gather, GridDim::data,
                              dp.local_params, gathered_parameter_bytes(in, n, dp.local_params),
                              "updated parameters"};
  const double buckets = reduction_buckets(in, dp.local_params, n);
  const TimedCollective scatter = time_collective(in, gradients, buckets);
  const TimedCollective gather = time_collective(in, parameters, buckets);
  if (scatter.seconds == 0) return;
  dp.all_reduce = scatter.seconds;
  const double backward = n * free_compute(in, layer, false);
  dp.window = overlap_window(in, buckets, backward);
  const double last_exposed = bucketed_exposed(in, scatter.seconds, buckets, backward);
  record_collective(in, record, gradients, scatter, last_exposed);
  dp.last_exposed = last_exposed;
  double scatter_exposed = last_exposed;
  if (in.config.zero >= 2) {
    const double earlier = double(in.spec.global_batch / (in.config.data * in.config.microbatch)) - 1;
    const double window = n * free_compute(in, layer, true);  // the next microbatch's
    const double each = scatter.seconds - hidden_seconds(in.machine, scatter.seconds, window);
    scatter_exposed += earlier * each;
    Collective earlier_gradients = gradients;
    earlier_gradients.what = "earlier gradients";  // of each microbatch but the last
    if (earlier > 0) record_collective(in, record, earlier_gradients, scatter, each, earlier);
  }
  const double gather_exposed = bucketed_exposed(in, gather.seconds, buckets, n * layer.forward);
  dp.exposed = scatter_exposed + gather_exposed;
  record_collective(in, record, parameters, gather, gather_exposed);
}

}  // namespace

DataParallelStep data_parallel_step(const CostInputs& in, const std::vector<int64_t>& layers,
                                    const LayerCompute& layer, const CostRecorder& record) {
  const ParallelConfig& c = in.config;
  DataParallelStep dp;
  // The fullest stage's gradients under its own layers' backward (the slowest stage's had been
  // the window: with uneven stages, no recompute priced slower than selective, whose longer
  // backward on another stage hid more of the first stage's reduction).
  const FullestStage fullest = fullest_stage(in.spec, c, layers);
  dp.local_params = double(fullest.params) / double(c.x * c.y * c.z);
  dp.updated_params = c.zero >= 1 ? dp.local_params / double(zero_shards(c)) : dp.local_params;
  const double fullest_layers = double(layers[size_t(fullest.stage)]);
  if (c.zero >= 1) shard_over_data(in, fullest_layers, layer, record, dp);
  else all_reduce_gradients(in, fullest_layers, layer, record, dp);
  dp.exposed += tied_embedding_all_reduce(in, record);
  return dp;
}

}  // namespace axo
