// CPU forward and backward operations (see ops.h for shapes).
#include "executor/cpu/ops.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#include "executor/cpu/gemm.h"

namespace axo::cpu {

void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int64_t B,
                       int64_t T, int64_t C) {
  embedding_forward_rows(out, tokens, wte, wpe, B * T, 0, T, C);
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int64_t B,
                        int64_t T, int64_t C) {
  embedding_backward_rows(dwte, dwpe, dout, tokens, B * T, 0, T, C);
}

void embedding_forward_rows(float* out, const int* tokens, const float* wte, const float* wpe, int64_t rows,
                            int64_t first_row, int64_t T, int64_t C) {
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + r * C;
    const float* token_row = wte + int64_t(tokens[r]) * C;
    const float* position_row = wpe + (first_row + r) % T * C;
    for (int64_t c = 0; c < C; ++c) o[c] = token_row[c] + position_row[c];
  }
}

void embedding_backward_rows(float* dwte, float* dwpe, const float* dout, const int* tokens, int64_t rows,
                             int64_t first_row, int64_t T, int64_t C) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* d = dout + r * C;
    float* token_row = dwte + int64_t(tokens[r]) * C;
    float* position_row = dwpe + (first_row + r) % T * C;
    for (int64_t c = 0; c < C; ++c) token_row[c] += d[c], position_row[c] += d[c];
  }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* weight,
                       const float* bias, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const float* x = in + n * C;
    double sum = 0;
    for (int64_t c = 0; c < C; ++c) sum += x[c];
    const float m = float(sum / double(C));
    double variance = 0;
    for (int64_t c = 0; c < C; ++c) variance += double(x[c] - m) * double(x[c] - m);
    const float s = float(1.0 / std::sqrt(variance / double(C) + 1e-5));
    float* o = out + n * C;
    for (int64_t c = 0; c < C; ++c) o[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                        const float* weight, const float* mean, const float* rstd, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const float* x = in + n * C;
    const float* d = dout + n * C;
    float* dx = din + n * C;
    // With x̂ = (x − μ)·σ⁻¹ and g = dout·weight:
    // dx = σ⁻¹ · (g − mean(g) − x̂ · mean(g · x̂)).
    double mean_g = 0, mean_gx = 0;
    for (int64_t c = 0; c < C; ++c) {
      const float xhat = (x[c] - mean[n]) * rstd[n];
      const float g = d[c] * weight[c];
      mean_g += g;
      mean_gx += double(g) * xhat;
      dweight[c] += d[c] * xhat;
      dbias[c] += d[c];
    }
    mean_g /= double(C);
    mean_gx /= double(C);
    for (int64_t c = 0; c < C; ++c) {
      const float xhat = (x[c] - mean[n]) * rstd[n];
      dx[c] += rstd[n] * (d[c] * weight[c] - float(mean_g) - xhat * float(mean_gx));
    }
  }
}

void linear_forward(float* out, const float* in, const float* weight, const float* bias, int64_t N,
                    int64_t C, int64_t OC) {
  gemm(false, true, N, OC, C, 1.0f, in, C, weight, C, 0.0f, out, OC);
  if (!bias) return;
  for (int64_t n = 0; n < N; ++n) {
    float* o = out + n * OC;
    for (int64_t j = 0; j < OC; ++j) o[j] += bias[j];
  }
}

void linear_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                     const float* weight, int64_t N, int64_t C, int64_t OC) {
  gemm(false, false, N, C, OC, 1.0f, dout, OC, weight, C, 1.0f, din, C);       // dX = dY·W
  gemm(true, false, OC, C, N, 1.0f, dout, OC, in, C, 1.0f, dweight, C);        // dW = dYᵀ·X
  if (!dbias) return;
  for (int64_t n = 0; n < N; ++n) {
    const float* d = dout + n * OC;
    for (int64_t j = 0; j < OC; ++j) dbias[j] += d[j];
  }
}

// Attention as GEMMs per (sequence, head), the shapes the cost model prices
// (CostModel::compute_local): scores S = scale·Q·Kᵀ [T,T], causal softmax
// P = softmax(S) row by row, out = P·V [T,hs]. Q, K and V are column blocks
// of qkv with row stride 3C; the masked upper triangle of P is exactly 0.
void attention_forward(float* out, float* att, const float* qkv, int64_t B, int64_t T, int64_t C,
                       int64_t NH) {
  const int64_t hs = C / NH, ld = 3 * C;
  const float scale = 1.0f / std::sqrt(float(hs));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) {
      const float* q = qkv + b * T * ld + h * hs;
      float* p = att + (b * NH + h) * T * T;
      gemm(false, true, T, T, hs, scale, q, ld, q + C, ld, 0.0f, p, T);
      for (int64_t t = 0; t < T; ++t) {
        Eigen::Map<Eigen::ArrayXf> visible(p + t * T, t + 1);
        visible = (visible - visible.maxCoeff()).exp();
        visible /= visible.sum();
        std::fill(p + t * T + t + 1, p + (t + 1) * T, 0.0f);
      }
      gemm(false, false, T, hs, T, 1.0f, p, T, q + 2 * C, ld, 0.0f, out + b * T * C + h * hs, C);
    }
  }
}

// Backward of the above: dP = dO·Vᵀ, dV += Pᵀ·dO, dS = P ⊙ (dP − rowsum(P ⊙ dP))·scale,
// dQ += dS·K, dK += dSᵀ·Q. datt_scratch holds dP, then dS, for each (sequence, head).
void attention_backward(float* dqkv, float* datt_scratch, const float* dout, const float* qkv, const float* att,
                        int64_t B, int64_t T, int64_t C, int64_t NH) {
  const int64_t hs = C / NH, ld = 3 * C;
  const float scale = 1.0f / std::sqrt(float(hs));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) {
      const float* q = qkv + b * T * ld + h * hs;
      const float* p = att + (b * NH + h) * T * T;
      const float* d = dout + b * T * C + h * hs;
      float* dq = dqkv + b * T * ld + h * hs;  // dK at dq + C, dV at dq + 2C
      float* ds = datt_scratch + (b * NH + h) * T * T;
      gemm(false, true, T, T, hs, 1.0f, d, C, q + 2 * C, ld, 0.0f, ds, T);
      gemm(true, false, T, hs, T, 1.0f, p, T, d, C, 1.0f, dq + 2 * C, ld);
      for (int64_t t = 0; t < T; ++t) {
        Eigen::Map<const Eigen::ArrayXf> p_row(p + t * T, T);
        Eigen::Map<Eigen::ArrayXf> row(ds + t * T, T);
        row = p_row * (row - (p_row * row).sum()) * scale;
      }
      gemm(false, false, T, hs, T, 1.0f, ds, T, q + C, ld, 1.0f, dq, ld);
      gemm(true, false, T, hs, T, 1.0f, ds, T, q, ld, 1.0f, dq + C, ld);
    }
  }
}

namespace {
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2/π)
constexpr float kGeluCubic = 0.044715f;
}  // namespace

// Through Eigen's vectorized tanh, not a libm call per element: several times
// faster, closer to the memory-bound work the cost model prices.
void gelu_forward(float* out, const float* in, int64_t N) {
  Eigen::Map<const Eigen::ArrayXf> x(in, N);
  Eigen::Map<Eigen::ArrayXf>(out, N) = 0.5f * x * (1.0f + (kGeluScale * (x + kGeluCubic * x.cube())).tanh());
}

void gelu_backward(float* din, const float* dout, const float* in, int64_t N) {
  Eigen::Map<const Eigen::ArrayXf> x(in, N), d(dout, N);
  const Eigen::ArrayXf th = (kGeluScale * (x + kGeluCubic * x.cube())).tanh();
  Eigen::Map<Eigen::ArrayXf>(din, N) +=
      d * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th.square()) * kGeluScale * (1.0f + 3.0f * kGeluCubic * x.square()));
}

void residual_forward(float* out, const float* a, const float* b, int64_t N) {
  for (int64_t i = 0; i < N; ++i) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, int64_t N) {
  for (int64_t i = 0; i < N; ++i) da[i] += dout[i], db[i] += dout[i];
}

float cross_entropy_forward(float* probs, const float* logits, const int* targets, int64_t BT,
                            int64_t V, int64_t Vp) {
  double loss = 0;
  for (int64_t n = 0; n < BT; ++n) {
    const float* z = logits + n * Vp;
    float* p = probs + n * Vp;
    float max_logit = -INFINITY;
    for (int64_t v = 0; v < V; ++v) max_logit = std::max(max_logit, z[v]);
    double sum = 0;
    for (int64_t v = 0; v < V; ++v) sum += p[v] = std::exp(z[v] - max_logit);
    for (int64_t v = 0; v < V; ++v) p[v] = float(p[v] / sum);
    for (int64_t v = V; v < Vp; ++v) p[v] = 0;
    loss -= std::log(double(p[targets[n]]) + 1e-30);
  }
  return float(loss / double(BT));
}

void cross_entropy_backward(float* dlogits, const float* probs, const int* targets, int64_t BT,
                            int64_t V, int64_t Vp) {
  const float scale = 1.0f / float(BT);
  for (int64_t n = 0; n < BT; ++n) {
    const float* p = probs + n * Vp;
    float* d = dlogits + n * Vp;
    for (int64_t v = 0; v < V; ++v) d[v] += scale * (p[v] - (v == targets[n] ? 1.0f : 0.0f));
  }
}

}  // namespace axo::cpu
