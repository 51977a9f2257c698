// AdamW over flat arrays (see adamw.h).
#include "executor/cpu/adamw.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <thread>

namespace axo::cpu {

namespace {

// 4 arrays × 2048 floats = 32 KiB: one block's three passes stay in L1/L2.
constexpr size_t kBlock = 2048;

struct Corrections {
  float first, second;
};
Corrections corrections(const AdamWSettings& s, long step) {
  return {1.0f - std::pow(s.beta1, float(step)), 1.0f - std::pow(s.beta2, float(step))};
}

}  // namespace

void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const AdamWSettings& s, long step) {
  using Array = Eigen::Map<Eigen::ArrayXf, Eigen::Unaligned>;
  using ConstArray = Eigen::Map<const Eigen::ArrayXf, Eigen::Unaligned>;
  const Corrections c = corrections(s, step);
  for (size_t start = 0; start < n; start += kBlock) {
    const Eigen::Index len = Eigen::Index(std::min(kBlock, n - start));
    Array theta(params + start, len), mm(m + start, len), vv(v + start, len);
    ConstArray g(grads + start, len);
    mm = s.beta1 * mm + (1.0f - s.beta1) * g;
    vv = s.beta2 * vv + (1.0f - s.beta2) * g.square();
    theta -= s.learning_rate * ((mm / c.first) / ((vv / c.second).sqrt() + s.epsilon) + s.weight_decay * theta);
  }
}

void adamw_update_reference(float* params, const float* grads, float* m, float* v, size_t n, const AdamWSettings& s,
                            long step) {
  const Corrections c = corrections(s, step);
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * g;
    v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * g * g;
    params[i] -= s.learning_rate * ((m[i] / c.first) / (std::sqrt(v[i] / c.second) + s.epsilon) + s.weight_decay * params[i]);
  }
}

void adamw_update_ranges(float* params, const float* grads, float* m, float* v, const std::vector<AdamWRange>& ranges,
                         const AdamWSettings& settings, long step, int threads) {
  int64_t total = 0;
  for (const AdamWRange& r : ranges) total += r.size;
  // Thread k takes elements [k·total/threads, (k+1)·total/threads) of the ranges laid end to end.
  auto run_share = [&](int64_t begin, int64_t end) {
    int64_t seen = 0;
    for (const AdamWRange& r : ranges) {
      const int64_t from = std::max(begin, seen), to = std::min(end, seen + r.size);
      if (from < to) {
        AdamWSettings s = settings;
        s.weight_decay = r.weight_decay;
        const int64_t o = r.offset + (from - seen);
        adamw_update(params + o, grads + o, m + o, v + o, size_t(to - from), s, step);
      }
      seen += r.size;
    }
  };
  threads = int(std::clamp<int64_t>(threads, 1, std::max<int64_t>(1, total / int64_t(kBlock))));
  std::vector<std::thread> workers;
  for (int k = 1; k < threads; ++k) workers.emplace_back(run_share, total * k / threads, total * (k + 1) / threads);
  run_share(0, total / threads);
  for (std::thread& w : workers) w.join();
}

}  // namespace axo::cpu
