// CUDA forward and backward operations (see ops.h; shapes in cpu/ops.h).
// Element-wise ops take one thread per element; row ops (LayerNorm, softmax,
// cross-entropy) one block per row with block-wide reductions; attention one
// thread per output element, each summing over the positions it sees.
#include "executor/cuda/ops.h"

#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <vector>

#include "executor/cuda/device.h"

namespace axo::cuda {

namespace {

constexpr int kThreads = 256;  // a multiple of the 32-thread warp

int blocks_for(int64_t n) { return int((n + kThreads - 1) / kThreads); }

void check_launch(const char* kernel) { check(int(cudaGetLastError()), kernel); }

// The sum (or max) of `value` over the block, in every thread. blockDim.x
// must be a multiple of 32.
__device__ float block_reduce(float value, bool maximum) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_down_sync(0xffffffffu, value, offset);
    value = maximum ? fmaxf(value, other) : value + other;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // the previous call's readers are done with partial
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < int(blockDim.x / 32) ? partial[lane] : (maximum ? -INFINITY : 0.0f);
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other = __shfl_down_sync(0xffffffffu, value, offset);
      value = maximum ? fmaxf(value, other) : value + other;
    }
    if (lane == 0) partial[0] = value;
  }
  __syncthreads();
  return partial[0];
}

__global__ void embedding_forward_kernel(float* out, const int* tokens, const float* wte, const float* wpe,
                                         int64_t rows, int64_t first_row, int64_t T, int64_t C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * C) return;
  const int64_t r = i / C, c = i % C;
  out[i] = wte[int64_t(tokens[r]) * C + c] + wpe[(first_row + r) % T * C + c];
}

// One thread per channel, over the rows in order (a token may repeat): the
// CPU's order of additions, without atomics.
__global__ void embedding_backward_kernel(float* dwte, float* dwpe, const float* dout, const int* tokens,
                                          int64_t rows, int64_t first_row, int64_t T, int64_t C) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float d = dout[r * C + c];
    dwte[int64_t(tokens[r]) * C + c] += d;
    dwpe[(first_row + r) % T * C + c] += d;
  }
}

__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* in, const float* weight,
                                         const float* bias, int64_t C) {
  const float* x = in + int64_t(blockIdx.x) * C;
  float sum = 0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) sum += x[c];
  const float m = block_reduce(sum, false) / float(C);
  float squares = 0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) squares += (x[c] - m) * (x[c] - m);
  const float s = rsqrtf(block_reduce(squares, false) / float(C) + 1e-5f);
  float* o = out + int64_t(blockIdx.x) * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) o[c] = (x[c] - m) * s * weight[c] + bias[c];
  if (threadIdx.x == 0) mean[blockIdx.x] = m, rstd[blockIdx.x] = s;
}

// dx = σ⁻¹ · (g − mean(g) − x̂ · mean(g · x̂)), g = dout·weight (cpu/ops.cc), one block per row.
__global__ void layernorm_backward_kernel(float* din, const float* dout, const float* in, const float* weight,
                                          const float* mean, const float* rstd, int64_t C) {
  const int64_t row = blockIdx.x;
  const float* x = in + row * C;
  const float* d = dout + row * C;
  const float m = mean[row], s = rstd[row];
  float sum_g = 0, sum_gx = 0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    const float xhat = (x[c] - m) * s, g = d[c] * weight[c];
    sum_g += g, sum_gx += g * xhat;
  }
  const float mean_g = block_reduce(sum_g, false) / float(C);
  const float mean_gx = block_reduce(sum_gx, false) / float(C);
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    const float xhat = (x[c] - m) * s;
    din[row * C + c] += s * (d[c] * weight[c] - mean_g - xhat * mean_gx);
  }
}

// dweight += Σ rows dout·x̂, dbias += Σ rows dout: one thread per channel, rows in order.
__global__ void layernorm_parameter_gradients_kernel(float* dweight, float* dbias, const float* dout, const float* in,
                                                     const float* mean, const float* rstd, int64_t N, int64_t C) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float dw = dweight[c], db = dbias[c];
  for (int64_t n = 0; n < N; ++n) {
    const float d = dout[n * C + c];
    dw += d * ((in[n * C + c] - mean[n]) * rstd[n]);
    db += d;
  }
  dweight[c] = dw, dbias[c] = db;
}

// One block per (b, h, t): the scaled scores of the visible positions, then
// their softmax; the masked positions are exactly 0.
__global__ void attention_softmax_kernel(float* att, const float* qkv, int64_t T, int64_t C, int64_t NH,
                                         float scale) {
  const int64_t row = blockIdx.x;  // (b·NH + h)·T + t
  const int64_t t = row % T, h = row / T % NH, b = row / T / NH;
  const int64_t hs = C / NH, ld = 3 * C;
  const float* q = qkv + (b * T + t) * ld + h * hs;
  float* p = att + row * T;
  float largest = -INFINITY;
  for (int64_t t2 = threadIdx.x; t2 <= t; t2 += blockDim.x) {
    const float* k = qkv + (b * T + t2) * ld + C + h * hs;
    float score = 0;
    for (int64_t i = 0; i < hs; ++i) score += q[i] * k[i];
    p[t2] = score * scale;
    largest = fmaxf(largest, p[t2]);
  }
  largest = block_reduce(largest, true);
  float sum = 0;
  for (int64_t t2 = threadIdx.x; t2 <= t; t2 += blockDim.x) sum += p[t2] = expf(p[t2] - largest);
  const float inverse = 1.0f / block_reduce(sum, false);
  for (int64_t t2 = threadIdx.x; t2 < T; t2 += blockDim.x) p[t2] = t2 <= t ? p[t2] * inverse : 0.0f;
}

// out[b, t, h·hs + i] = Σ over t2 ≤ t of att[b, h, t, t2] · v[b, t2, h·hs + i].
__global__ void attention_values_kernel(float* out, const float* att, const float* qkv, int64_t B, int64_t T,
                                        int64_t C, int64_t NH) {
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= B * T * C) return;
  const int64_t c = index % C, t = index / C % T, b = index / C / T;
  const int64_t hs = C / NH, h = c / hs, ld = 3 * C;
  const float* p = att + ((b * NH + h) * T + t) * T;
  float sum = 0;
  for (int64_t t2 = 0; t2 <= t; ++t2) sum += p[t2] * qkv[(b * T + t2) * ld + 2 * C + c];
  out[index] = sum;
}

// dP[b, h, t, t2] = dout[b, t, h] · v[b, t2, h] over the head's hs channels.
__global__ void attention_dprobs_kernel(float* dp, const float* dout, const float* qkv, int64_t B, int64_t T,
                                        int64_t C, int64_t NH) {
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= B * NH * T * T) return;
  const int64_t t2 = index % T, t = index / T % T, h = index / T / T % NH, b = index / T / T / NH;
  const int64_t hs = C / NH, ld = 3 * C;
  const float* d = dout + (b * T + t) * C + h * hs;
  const float* v = qkv + (b * T + t2) * ld + 2 * C + h * hs;
  float sum = 0;
  for (int64_t i = 0; i < hs; ++i) sum += d[i] * v[i];
  dp[index] = sum;
}

// One block per (b, h, t): dS = P ⊙ (dP − Σ P ⊙ dP) · scale, in place.
__global__ void attention_softmax_backward_kernel(float* ds, const float* att, int64_t T, float scale) {
  const int64_t row = blockIdx.x;
  const float* p = att + row * T;
  float* d = ds + row * T;
  float dot = 0;
  for (int64_t t2 = threadIdx.x; t2 < T; t2 += blockDim.x) dot += p[t2] * d[t2];
  dot = block_reduce(dot, false);
  for (int64_t t2 = threadIdx.x; t2 < T; t2 += blockDim.x) d[t2] = p[t2] * (d[t2] - dot) * scale;
}

// dV += Pᵀ·dO, dQ += dS·K, dK += dSᵀ·Q: one thread per (b, position, channel),
// writing the three gradients of that position and channel.
__global__ void attention_qkv_backward_kernel(float* dqkv, const float* ds, const float* att, const float* dout,
                                              const float* qkv, int64_t B, int64_t T, int64_t C, int64_t NH) {
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= B * T * C) return;
  const int64_t c = index % C, t = index / C % T, b = index / C / T;
  const int64_t hs = C / NH, h = c / hs, ld = 3 * C;
  const float* head_p = att + (b * NH + h) * T * T;
  const float* head_ds = ds + (b * NH + h) * T * T;
  const float* column = qkv + b * T * ld + c;  // q at column[t·ld], k at + C, v at + 2C
  const float* d = dout + b * T * C + c;
  float dq = 0, dk = 0, dv = 0;
  for (int64_t other = 0; other < T; ++other) {
    dq += head_ds[t * T + other] * column[other * ld + C];  // dS[t, other] · k[other]
    dk += head_ds[other * T + t] * column[other * ld];      // dS[other, t] · q[other]
    dv += head_p[other * T + t] * d[other * C];             // P[other, t] · dO[other]
  }
  float* g = dqkv + (b * T + t) * ld + c;
  g[0] += dq, g[C] += dk, g[2 * C] += dv;
}

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2/π)
constexpr float kGeluCubic = 0.044715f;

__global__ void gelu_forward_kernel(float* out, const float* in, int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float x = in[i];
  out[i] = 0.5f * x * (1.0f + tanhf(kGeluScale * (x + kGeluCubic * x * x * x)));
}

__global__ void gelu_backward_kernel(float* din, const float* dout, const float* in, int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float x = in[i], th = tanhf(kGeluScale * (x + kGeluCubic * x * x * x));
  din[i] += dout[i] * (0.5f * (1.0f + th) +
                       0.5f * x * (1.0f - th * th) * kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x));
}

__global__ void residual_forward_kernel(float* out, const float* a, const float* b, int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < N) out[i] = a[i] + b[i];
}

__global__ void residual_backward_kernel(float* da, float* db, const float* dout, int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < N) da[i] += dout[i], db[i] += dout[i];
}

// One block per row: the softmax over the V real tokens (padding 0) and the row's loss.
__global__ void cross_entropy_forward_kernel(float* probs, float* losses, const float* logits, const int* targets,
                                             int64_t V, int64_t Vp) {
  const int64_t row = blockIdx.x;
  const float* z = logits + row * Vp;
  float* p = probs + row * Vp;
  float largest = -INFINITY;
  for (int64_t v = threadIdx.x; v < V; v += blockDim.x) largest = fmaxf(largest, z[v]);
  largest = block_reduce(largest, true);
  float sum = 0;
  for (int64_t v = threadIdx.x; v < V; v += blockDim.x) sum += p[v] = expf(z[v] - largest);
  const float inverse = 1.0f / block_reduce(sum, false);
  for (int64_t v = threadIdx.x; v < Vp; v += blockDim.x) p[v] = v < V ? p[v] * inverse : 0.0f;
  __syncthreads();  // p[target] was written by another thread
  if (threadIdx.x == 0) losses[row] = -logf(p[targets[row]] + 1e-30f);
}

__global__ void cross_entropy_backward_kernel(float* dlogits, const float* probs, const int* targets, int64_t BT,
                                              int64_t V, int64_t Vp) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= BT * V) return;
  const int64_t n = i / V, v = i % V, at = n * Vp + v;
  dlogits[at] += (probs[at] - (v == targets[n] ? 1.0f : 0.0f)) / float(BT);
}

__global__ void adamw_kernel(float* params, const float* grads, float* m, float* v, int64_t n, cpu::AdamWSettings s,
                             float correction1, float correction2) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = grads[i];
  const float mi = s.beta1 * m[i] + (1.0f - s.beta1) * g;
  const float vi = s.beta2 * v[i] + (1.0f - s.beta2) * g * g;
  m[i] = mi, v[i] = vi;
  params[i] -= s.learning_rate * ((mi / correction1) / (sqrtf(vi / correction2) + s.epsilon) + s.weight_decay * params[i]);
}

}  // namespace

void embedding_forward_rows(float* out, const int* tokens, const float* wte, const float* wpe, int64_t rows,
                            int64_t first_row, int64_t T, int64_t C) {
  if (rows * C == 0) return;
  embedding_forward_kernel<<<blocks_for(rows * C), kThreads>>>(out, tokens, wte, wpe, rows, first_row, T, C);
  check_launch("embedding_forward");
}

void embedding_backward_rows(float* dwte, float* dwpe, const float* dout, const int* tokens, int64_t rows,
                             int64_t first_row, int64_t T, int64_t C) {
  if (rows * C == 0) return;
  embedding_backward_kernel<<<blocks_for(C), kThreads>>>(dwte, dwpe, dout, tokens, rows, first_row, T, C);
  check_launch("embedding_backward");
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* weight,
                       const float* bias, int64_t N, int64_t C) {
  if (N * C == 0) return;
  layernorm_forward_kernel<<<unsigned(N), kThreads>>>(out, mean, rstd, in, weight, bias, C);
  check_launch("layernorm_forward");
}

void layernorm_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                        const float* weight, const float* mean, const float* rstd, int64_t N, int64_t C) {
  if (N * C == 0) return;
  layernorm_backward_kernel<<<unsigned(N), kThreads>>>(din, dout, in, weight, mean, rstd, C);
  check_launch("layernorm_backward");
  layernorm_parameter_gradients_kernel<<<blocks_for(C), kThreads>>>(dweight, dbias, dout, in, mean, rstd, N, C);
  check_launch("layernorm_parameter_gradients");
}

void attention_forward(float* out, float* att, const float* qkv, int64_t B, int64_t T, int64_t C, int64_t NH) {
  if (B * T * C == 0) return;
  const float scale = 1.0f / std::sqrt(float(C / NH));
  attention_softmax_kernel<<<unsigned(B * NH * T), kThreads>>>(att, qkv, T, C, NH, scale);
  check_launch("attention_softmax");
  attention_values_kernel<<<blocks_for(B * T * C), kThreads>>>(out, att, qkv, B, T, C, NH);
  check_launch("attention_values");
}

void attention_backward(float* dqkv, float* datt_scratch, const float* dout, const float* qkv, const float* att,
                        int64_t B, int64_t T, int64_t C, int64_t NH) {
  if (B * T * C == 0) return;
  const float scale = 1.0f / std::sqrt(float(C / NH));
  attention_dprobs_kernel<<<blocks_for(B * NH * T * T), kThreads>>>(datt_scratch, dout, qkv, B, T, C, NH);
  check_launch("attention_dprobs");
  attention_softmax_backward_kernel<<<unsigned(B * NH * T), kThreads>>>(datt_scratch, att, T, scale);
  check_launch("attention_softmax_backward");
  attention_qkv_backward_kernel<<<blocks_for(B * T * C), kThreads>>>(dqkv, datt_scratch, att, dout, qkv, B, T, C, NH);
  check_launch("attention_qkv_backward");
}

void gelu_forward(float* out, const float* in, int64_t N) {
  if (N == 0) return;
  gelu_forward_kernel<<<blocks_for(N), kThreads>>>(out, in, N);
  check_launch("gelu_forward");
}

void gelu_backward(float* din, const float* dout, const float* in, int64_t N) {
  if (N == 0) return;
  gelu_backward_kernel<<<blocks_for(N), kThreads>>>(din, dout, in, N);
  check_launch("gelu_backward");
}

void residual_forward(float* out, const float* a, const float* b, int64_t N) {
  if (N == 0) return;
  residual_forward_kernel<<<blocks_for(N), kThreads>>>(out, a, b, N);
  check_launch("residual_forward");
}

void residual_backward(float* da, float* db, const float* dout, int64_t N) {
  if (N == 0) return;
  residual_backward_kernel<<<blocks_for(N), kThreads>>>(da, db, dout, N);
  check_launch("residual_backward");
}

float cross_entropy_forward(float* probs, const float* logits, const int* targets, int64_t BT, int64_t V,
                            int64_t Vp) {
  if (BT == 0) return NAN;  // the mean of no losses, as the CPU's 0/0
  const std::unique_ptr<float, void (*)(float*)> losses(device_alloc(size_t(BT)), device_free);
  cross_entropy_forward_kernel<<<unsigned(BT), kThreads>>>(probs, losses.get(), logits, targets, V, Vp);
  check_launch("cross_entropy_forward");
  std::vector<float> host(static_cast<size_t>(BT));
  copy_to_host(host.data(), losses.get(), host.size());
  double sum = 0;
  for (float loss : host) sum += loss;
  return float(sum / double(BT));
}

void cross_entropy_backward(float* dlogits, const float* probs, const int* targets, int64_t BT, int64_t V,
                            int64_t Vp) {
  if (BT * V == 0) return;
  cross_entropy_backward_kernel<<<blocks_for(BT * V), kThreads>>>(dlogits, probs, targets, BT, V, Vp);
  check_launch("cross_entropy_backward");
}

void adamw_update(float* params, const float* grads, float* m, float* v, int64_t n, const cpu::AdamWSettings& settings,
                  long step) {
  if (n == 0) return;
  const float correction1 = 1.0f - std::pow(settings.beta1, float(step));
  const float correction2 = 1.0f - std::pow(settings.beta2, float(step));
  adamw_kernel<<<blocks_for(n), kThreads>>>(params, grads, m, v, n, settings, correction1, correction2);
  check_launch("adamw");
}

}  // namespace axo::cuda
