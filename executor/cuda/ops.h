// The GPT's operations on the CUDA backend: the CPU backend's functions
// (executor/cpu/ops.h, whose comments give the shapes and formulas) with the
// same arguments and meaning, on device buffers, in fp32: every op but the
// linear layers, whose GEMMs are cuBLAS's (cublas_gemm.h). Backward
// functions accumulate (+=) as on the CPU. Each call launches on the current
// device's default stream and returns without waiting, but
// cross_entropy_forward, which returns the loss to the host. A size of 0 does
// nothing, as on the CPU.
//
// Every op is tested against the CPU backend (tests/executor/cuda_ops_test.cc,
// run where a GPU is visible). No atomics: parameter gradients are summed
// over rows in row order by one thread per channel, so runs repeat bit for
// bit; reductions within a row (LayerNorm, softmax) run in another order than
// on the CPU, so results agree with it to fp32 round-off. Compiled without
// fused multiply-adds (-fmad=false), AdamW rounds as the CPU's does.
#pragma once

#include <cstdint>

#include "executor/cpu/adamw.h"

namespace axo::cuda {

void embedding_forward_rows(float* out, const int* tokens, const float* wte, const float* wpe, int64_t rows,
                            int64_t first_row, int64_t T, int64_t C);
void embedding_backward_rows(float* dwte, float* dwpe, const float* dout, const int* tokens, int64_t rows,
                             int64_t first_row, int64_t T, int64_t C);

void layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* weight,
                       const float* bias, int64_t N, int64_t C);
void layernorm_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                        const float* weight, const float* mean, const float* rstd, int64_t N, int64_t C);

// datt_scratch: [B, NH, T, T] on the device, as on the CPU.
void attention_forward(float* out, float* att, const float* qkv, int64_t B, int64_t T, int64_t C, int64_t NH);
void attention_backward(float* dqkv, float* datt_scratch, const float* dout, const float* qkv, const float* att,
                        int64_t B, int64_t T, int64_t C, int64_t NH);

void gelu_forward(float* out, const float* in, int64_t N);
void gelu_backward(float* din, const float* dout, const float* in, int64_t N);

void residual_forward(float* out, const float* a, const float* b, int64_t N);
void residual_backward(float* da, float* db, const float* dout, int64_t N);

// targets: BT tokens on the device. Returns the mean loss (waits for it).
float cross_entropy_forward(float* probs, const float* logits, const int* targets, int64_t BT, int64_t V, int64_t Vp);
void cross_entropy_backward(float* dlogits, const float* probs, const int* targets, int64_t BT, int64_t V, int64_t Vp);

// One AdamW step over n device values (cpu/adamw.h's update).
void adamw_update(float* params, const float* grads, float* m, float* v, int64_t n,
                  const cpu::AdamWSettings& settings, long step);

}  // namespace axo::cuda
