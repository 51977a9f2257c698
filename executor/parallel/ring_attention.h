// Ring attention over the context group (Liu et al. 2023, "Ring Attention
// with Blockwise Transformers"; Megatron-LM docs/api-guide/context_parallel.md):
// causal multi-head attention of this rank's queries against the keys and
// values of the whole sequence, whose blocks travel around the ring.
//
// Each of the c context ranks holds Tl = T/c tokens of every sequence
// (context_chunks.h). In step s = 0 … c−1 the rank holds the key/value block
// of rank r − s: it sends that block on to rank r + 1 and receives the next
// from rank r − 1 (non-blocking MPI) while it computes the attention of its
// queries against the block in hand. The softmax is taken online across the
// blocks (running row max m and sum l, the output rescaled by e^(m_old − m_new)
// as each block adds to it), and the causal mask is applied on the global
// positions, sub-block by sub-block of Tc × Tc: a key chunk after the query
// chunk is skipped, the same chunk is masked to its lower triangle, an
// earlier one is whole. The forward keeps each row's log-sum-exp
// lse = m + ln l [B, NH, Tl] instead of the probabilities.
//
// Backward (as flash attention's): D = rowsum(dO ⊙ O); per block the
// probabilities again, P = exp(scale·QKᵀ − lse), then dV += Pᵀ·dO,
// dP = dO·Vᵀ, dS = P ⊙ (dP − D)·scale, dQ += dS·K, dK += dSᵀ·Q. The key/value
// blocks go round the ring again, and each block's dK, dV partial sums
// follow it one step behind: the rank adds its part to the sums received
// from rank r − 1 and passes them to r + 1, so after c steps each block's
// gradient is back on its owner.
//
// Shapes (the rank's local heads under tensor parallelism): qkv [B·Tl, 3C]
// (q, k, v each [NH, C/NH] per row, as cpu::attention_forward), out and
// dout [B·Tl, C], lse [B, NH, Tl].
#pragma once

#include <cstdint>

#include "executor/comm/communicator.h"
#include "executor/memory/device_memory.h"
#include "executor/parallel/context_chunks.h"
#include "executor/parallel/phase_times.h"

namespace axo {

class ContextRingAttention {
 public:
  // `ring` is the context group; it, times and memory must outlive this.
  // The key/value blocks in flight are booked as communication buffers,
  // the rest as activations.
  ContextRingAttention(Communicator& ring, PhaseTimes& times, DeviceMemory& memory);

  // Shapes for the coming microbatches: B sequences, C channels and NH heads on this rank.
  void set_shape(const ContextChunks& chunks, int64_t B, int64_t C, int64_t NH);

  // out[B·Tl, C] and lse[B, NH, Tl] from this rank's qkv.
  void forward(float* out, float* lse, const float* qkv);
  // dqkv[B·Tl, 3C] += the gradient of the attention at dout.
  void backward(float* dqkv, const float* dout, const float* qkv, const float* out, const float* lse);

 private:
  // The attention of this rank's queries against the block of context rank `owner` (kv [B·Tl, 2C]).
  void forward_block(float* out, const float* qkv, const float* kv, int64_t owner);
  void backward_block(float* dqkv, float* dkv, const float* dout, const float* qkv, const float* kv,
                      const float* lse, int64_t owner);
  // The causal relation of a query chunk to a key chunk: 0 skip, 1 lower triangle, 2 whole.
  int visibility(int64_t query_half, int64_t owner, int64_t key_half) const;
  // Wait for a request (if any) into the ring's time.
  void wait(RequestPtr& request);
  // Start passing `count` floats of send to the next rank and receiving as many from the previous.
  void pass(const float* send, float* receive, int64_t count, int tag, RequestPtr& sent, RequestPtr& received);

  Communicator& ring_;
  PhaseTimes& times_;
  ContextChunks chunks_;
  int64_t B_ = 0, C_ = 0, NH_ = 0, hs_ = 0, Tl_ = 0, Tc_ = 0;
  DeviceFloats kv_[2];           // [B·Tl, 2C]: the block in hand and the next
  DeviceFloats dkv_[3];          // [B·Tl, 2C]: this rank's part, the sums received, the sums sent on
  DeviceFloats max_, sum_;       // [B, NH, Tl]: the online softmax's running max and sum; D in backward
  DeviceFloats scores_, dscores_;  // [Tc, Tc] each
};

}  // namespace axo
