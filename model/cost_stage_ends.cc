// The embedding, LM head and loss (see cost_stage_ends.h).
#include "model/cost_stage_ends.h"

#include "model/cost_fp8.h"
#include "model/cost_fsdp_copies.h"
#include "model/cost_grad_accumulation.h"
#include "model/gemm_model.h"

namespace axo {

namespace {

void embedding_compute(const CostInputs& in, const CostRecorder& record, StageEndCompute& ends) {
  const double bytes = 2 * in.shapes.tokens * in.shapes.hidden_local * in.shapes.element_bytes;
  constexpr CostScope first = CostScope::first_stage;
  ends.first_forward = record.memory(first, CostPhase::forward, "embedding lookup", bytes,
                                     memory_op_seconds(in.machine, bytes, 1));
  ends.first_backward = record.memory(first, CostPhase::backward, "embedding scatter-add", 2 * bytes,
                                      memory_op_seconds(in.machine, 2 * bytes, 1));
  // An untied embedding is an FSDP unit of its own; a tied one is the LM head's (head_compute).
  if (!in.spec.tied_embeddings) {
    ends.first_backward += fsdp_copy_seconds(in, record, first, in.shapes.head_weights(), 1, in.shapes.element_bytes);
  }
  // The embedding's gradients; a tied embedding on the head's stage is the head's (head_compute).
  if (embedding_apart_from_head(in.spec, in.config)) {
    ends.first_backward += grad_accumulation_seconds(in, record, first, in.shapes.head_weights());
  }
}

void head_compute(const CostInputs& in, const CostRecorder& record, StageEndCompute& ends) {
  const LocalShapes& x = in.shapes;
  const Precision p = tensor_precision(in.spec.precision);  // the LM head stays bf16 under fp8
  const double t = x.tokens, v = x.vocab_local, k = x.hidden_local, e = x.element_bytes;
  constexpr CostScope last = CostScope::last_stage;
  const double head = record.gemm(last, CostPhase::forward, "lm head", t, v, k, gemm_seconds(in.machine, p, t, v, k));
  const double head_dx =
      record.gemm(last, CostPhase::backward, "lm head dX", t, k, v, gemm_seconds(in.machine, p, t, k, v));
  const double head_dw =
      record.gemm(last, CostPhase::backward, "lm head dW", v, k, t, gemm_seconds(in.machine, p, v, k, t));
  const double norm_bytes = 2 * x.hidden_elems * e;
  const double norm = record.memory(last, CostPhase::forward, "final norm", norm_bytes,
                                    memory_op_seconds(in.machine, norm_bytes, 1));
  const double loss_bytes = t * v * (e + 4 + 4);  // read logits, write fp32 softmax, read it back
  const double loss = record.memory(last, CostPhase::forward, "cross-entropy", loss_bytes,
                                    memory_op_seconds(in.machine, loss_bytes, 2));
  ends.last_forward = head + loss + norm;
  // Backward: the loss's gradient over the logits again, the norm's backward twice its forward.
  const double loss_backward = record.memory(last, CostPhase::backward, "cross-entropy backward", loss_bytes, loss);
  const double norm_backward = record.memory(last, CostPhase::backward, "final norm backward", 2 * norm_bytes, 2 * norm);
  const double copies = fsdp_copy_seconds(in, record, last, x.head_weights(), 1, x.element_bytes);
  const double accumulation = grad_accumulation_seconds(in, record, last, x.head_weights());
  ends.last_backward = head_dx + head_dw + loss_backward + norm_backward + copies + accumulation;
}

// Sums exposed collectives and records each whole.
struct ExposedSum {
  const CostInputs& in;
  const CostRecorder& record;
  double seconds = 0;
  void operator()(const Collective& c) {
    const TimedCollective timed = time_collective(in, c);
    if (timed.seconds <= 0) return;
    seconds += timed.seconds;
    record_collective(in, record, c, timed, timed.seconds);
  }
};

}  // namespace

StageEndCompute stage_end_compute(const CostInputs& in, const CostRecorder& record) {
  StageEndCompute ends;
  embedding_compute(in, record, ends);
  head_compute(in, record, ends);
  return ends;
}

StageEndComm stage_end_comm(const CostInputs& in, const CostRecorder& record) {
  const LocalShapes& x = in.shapes;
  const double e = x.element_bytes, activation = x.tokens * x.hidden_local, a = activation_comm_bytes(in);
  const double head_block = x.head_weights();
  constexpr CostScope first = CostScope::first_stage, last = CostScope::last_stage;
  constexpr CostPhase fwd = CostPhase::forward, bwd = CostPhase::backward;
  using Op = CollectiveOp;
  ExposedSum embedding{in, record}, head{in, record}, head_backward{in, record};
  // The vocabulary-parallel lookup's partial sums: all-reduced; under sequence parallelism
  // reduce-scattered along the sequence where no learned positions are added after them, and the
  // gradient all-gathered back in backward (Megatron-Core LanguageModelEmbedding's
  // reduce_scatter_embeddings, else the all-reduce and scatter_to_sequence_parallel_region).
  const bool scattered = in.config.sequence_parallel && in.spec.positions != PositionKind::learned;
  const Op sum_lookups = scattered ? Op::reduce_scatter : Op::all_reduce;
  embedding({first, fwd, sum_lookups, GridDim::y, activation, a, "embedding output"});
  if (in.config.sequence_parallel) {
    embedding({first, bwd, Op::all_gather, GridDim::y, activation, a, "embedding output gradient"});
  }
  // Sharded over Z (FSDP's units), gathered before use and their gradients reduce-scattered; axo's
  // executor keeps them whole over Z and sums their gradients with the data-parallel step's.
  const bool sharded_over_z = !keeps_whole_over_z(in.machine);
  if (sharded_over_z) embedding({first, fwd, Op::all_gather, GridDim::z, head_block, e, "embedding weights"});
  // A tied head on the embedding's stage is the same FSDP unit, gathered once (cost_fsdp_copies.h).
  if (sharded_over_z && embedding_apart_from_head(in.spec, in.config)) {
    head({last, fwd, Op::all_gather, GridDim::z, head_block, e, "lm head weights"});
  }
  head({last, fwd, Op::all_reduce, GridDim::x, x.tokens * x.vocab_local, a, "partial logits"});
  head({last, fwd, Op::all_reduce, GridDim::y, 2 * x.tokens, 4, "loss max and sum"});
  head_backward({last, bwd, Op::all_reduce, GridDim::y, activation, a, "lm head dX"});
  if (sharded_over_z) {
    head_backward({last, bwd, Op::reduce_scatter, GridDim::z, head_block, reduced_gradient_bytes(in), "lm head dW"});
  }
  return {embedding.seconds, head.seconds, head_backward.seconds};
}

}  // namespace axo
