// LayerNorm with channels split over a group (see sharded_layernorm.h).
#include "executor/parallel/sharded_layernorm.h"

#include <cmath>

#include "executor/cpu/ops.h"
#include "executor/timer.h"

namespace axo {

void ShardedLayerNorm::forward(float* out, float* mean, float* rstd, const float* in, const float* weight,
                               const float* bias, int64_t N, int64_t C_local) {
  if (group_.size() == 1) {
    timed(times_.ops.layernorm, [&] { cpu::layernorm_forward(out, mean, rstd, in, weight, bias, N, C_local); });
    return;
  }
  sums_.resize(size_t(N));
  auto row_sums = [&](auto&& term) {
    timed(times_.ops.layernorm, [&] {
      for (int64_t n = 0; n < N; ++n) {
        double sum = 0;
        for (int64_t c = 0; c < C_local; ++c) sum += term(n, in[n * C_local + c]);
        sums_[size_t(n)] = float(sum);
      }
    });
    timed(times_.tp.all_reduce, [&] { group_.all_reduce(sums_.data(), size_t(N)); });
  };
  row_sums([](int64_t, float x) { return double(x); });
  for (int64_t n = 0; n < N; ++n) mean[n] = float(double(sums_[size_t(n)]) / double(channels_));
  row_sums([&](int64_t n, float x) { return double(x - mean[n]) * double(x - mean[n]); });
  timed(times_.ops.layernorm, [&] {
    for (int64_t n = 0; n < N; ++n) {
      const float s = float(1.0 / std::sqrt(double(sums_[size_t(n)]) / double(channels_) + 1e-5));
      rstd[n] = s;
      for (int64_t c = 0; c < C_local; ++c) {
        out[n * C_local + c] = (in[n * C_local + c] - mean[n]) * s * weight[c] + bias[c];
      }
    }
  });
}

void ShardedLayerNorm::backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                                const float* weight, const float* mean, const float* rstd, int64_t N,
                                int64_t C_local) {
  if (group_.size() == 1) {
    timed(times_.ops.layernorm,
          [&] { cpu::layernorm_backward(din, dweight, dbias, dout, in, weight, mean, rstd, N, C_local); });
    return;
  }
  // With x̂ = (x − μ)·σ⁻¹ and g = dout·weight: dx = σ⁻¹ · (g − mean(g) − x̂ · mean(g · x̂)),
  // the means over the whole row.
  sums_.resize(size_t(2 * N));
  timed(times_.ops.layernorm, [&] {
    for (int64_t n = 0; n < N; ++n) {
      double sum_g = 0, sum_gx = 0;
      for (int64_t c = 0; c < C_local; ++c) {
        const float xhat = (in[n * C_local + c] - mean[n]) * rstd[n];
        const float d = dout[n * C_local + c];
        const float g = d * weight[c];
        sum_g += g;
        sum_gx += double(g) * xhat;
        dweight[c] += d * xhat;
        dbias[c] += d;
      }
      sums_[size_t(2 * n)] = float(sum_g), sums_[size_t(2 * n + 1)] = float(sum_gx);
    }
  });
  timed(times_.tp.all_reduce, [&] { group_.all_reduce(sums_.data(), size_t(2 * N)); });
  timed(times_.ops.layernorm, [&] {
    for (int64_t n = 0; n < N; ++n) {
      const float mean_g = float(double(sums_[size_t(2 * n)]) / double(channels_));
      const float mean_gx = float(double(sums_[size_t(2 * n + 1)]) / double(channels_));
      for (int64_t c = 0; c < C_local; ++c) {
        const float xhat = (in[n * C_local + c] - mean[n]) * rstd[n];
        din[n * C_local + c] += rstd[n] * (dout[n * C_local + c] * weight[c] - mean_g - xhat * mean_gx);
      }
    }
  });
}

}  // namespace axo
