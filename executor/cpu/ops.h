// The GPT's operations on the CPU backend, forward and backward, over flat
// row-major fp32 arrays. Every function takes its sizes explicitly, so a
// layer holding a shard of a tensor (the 4D tensor-parallel executor) calls
// the same code on its local shapes. Backward functions accumulate (+=) into
// the gradients of parameters and inputs, so callers zero them once per step.
//
// Sizes: B sequences, T positions, C channels, V (padded) vocabulary, NH
// heads, OC output channels.
#pragma once

#include <cstdint>

namespace axo::cpu {

// out[B,T,C] = wte[token] + wpe[t]
void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int64_t B,
                       int64_t T, int64_t C);
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int64_t B,
                        int64_t T, int64_t C);
// The same over `rows` consecutive rows of a [·, T] batch starting at row
// first_row (a slice of the sequence, as sequence parallelism holds): row r
// is position (first_row + r) mod T; tokens points at the slice's first token.
void embedding_forward_rows(float* out, const int* tokens, const float* wte, const float* wpe, int64_t rows,
                            int64_t first_row, int64_t T, int64_t C);
void embedding_backward_rows(float* dwte, float* dwpe, const float* dout, const int* tokens, int64_t rows,
                             int64_t first_row, int64_t T, int64_t C);

// out[N,C] = (in − mean) / sqrt(var + 1e-5) · weight + bias, per row; keeps
// mean[N] and rstd[N] for backward.
void layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* weight,
                       const float* bias, int64_t N, int64_t C);
void layernorm_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                        const float* weight, const float* mean, const float* rstd, int64_t N, int64_t C);

// out[N,OC] = in[N,C] · weight[OC,C]ᵀ + bias[OC] (bias may be null).
void linear_forward(float* out, const float* in, const float* weight, const float* bias, int64_t N,
                    int64_t C, int64_t OC);
// din[N,C] += dout·weight; dweight[OC,C] += doutᵀ·in; dbias[OC] += Σ dout.
void linear_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                     const float* weight, int64_t N, int64_t C, int64_t OC);

// Causal multi-head attention on qkv[B,T,3C] (q, k, v each [NH, C/NH] per
// position) → out[B,T,C]; keeps the softmax probabilities att[B,NH,T,T].
void attention_forward(float* out, float* att, const float* qkv, int64_t B, int64_t T, int64_t C,
                       int64_t NH);
void attention_backward(float* dqkv, float* datt_scratch, const float* dout, const float* qkv,
                        const float* att, int64_t B, int64_t T, int64_t C, int64_t NH);

// GELU, tanh approximation (Hendrycks & Gimpel), element-wise over N values.
void gelu_forward(float* out, const float* in, int64_t N);
void gelu_backward(float* din, const float* dout, const float* in, int64_t N);

// out = a + b; backward passes dout to both.
void residual_forward(float* out, const float* a, const float* b, int64_t N);
void residual_backward(float* da, float* db, const float* dout, int64_t N);

// Softmax over logits[B·T, Vp] (the first V columns are real tokens), the
// mean cross-entropy against targets; writes probabilities into probs and
// returns the mean loss. Backward writes dlogits = (probs − onehot) / (B·T).
float cross_entropy_forward(float* probs, const float* logits, const int* targets, int64_t BT,
                            int64_t V, int64_t Vp);
void cross_entropy_backward(float* dlogits, const float* probs, const int* targets, int64_t BT,
                            int64_t V, int64_t Vp);

}  // namespace axo::cpu
