// Ring attention over the context group (see ring_attention.h).
#include "executor/parallel/ring_attention.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "executor/cpu/gemm.h"
#include "executor/timer.h"

namespace axo {

namespace {

// The two kinds of message between ring neighbours, matched in order per kind.
constexpr int kKeyValueTag = 7301, kGradientTag = 7302;

DeviceFloats buffer(DeviceMemory& memory, DeviceUse use) { return DeviceFloats(DeviceAllocator<float>(memory, use)); }

using Row = Eigen::Map<Eigen::ArrayXf>;

}  // namespace

ContextRingAttention::ContextRingAttention(Communicator& ring, PhaseTimes& times, DeviceMemory& memory)
    : ring_(ring),
      times_(times),
      kv_{buffer(memory, DeviceUse::comm_buffers), buffer(memory, DeviceUse::comm_buffers)},
      dkv_{buffer(memory, DeviceUse::activations), buffer(memory, DeviceUse::comm_buffers),
           buffer(memory, DeviceUse::comm_buffers)},
      max_(buffer(memory, DeviceUse::activations)),
      sum_(max_.get_allocator()),
      scores_(max_.get_allocator()),
      dscores_(max_.get_allocator()) {}

void ContextRingAttention::set_shape(const ContextChunks& chunks, int64_t B, int64_t C, int64_t NH) {
  chunks_ = chunks;
  B_ = B, C_ = C, NH_ = NH, hs_ = C / NH, Tl_ = chunks.local_length(), Tc_ = chunks.chunk_length();
  const size_t block = size_t(B * Tl_ * 2 * C), rows = size_t(B * NH * Tl_), scores = size_t(Tc_ * Tc_);
  for (DeviceFloats& b : kv_) b.assign(block, 0.0f);
  for (DeviceFloats& b : dkv_) b.assign(block, 0.0f);
  max_.assign(rows, 0.0f), sum_.assign(rows, 0.0f);
  scores_.assign(scores, 0.0f), dscores_.assign(scores, 0.0f);
}

int ContextRingAttention::visibility(int64_t query_half, int64_t owner, int64_t key_half) const {
  const int64_t query = chunks_.chunk_of(ring_.rank(), query_half), key = chunks_.chunk_of(owner, key_half);
  return key > query ? 0 : key == query ? 1 : 2;
}

void ContextRingAttention::wait(RequestPtr& request) {
  if (!request) return;
  timed(times_.tp.ring, [&] { request->wait(); });
  request.reset();
}

void ContextRingAttention::pass(const float* send, float* receive, int64_t count, int tag, RequestPtr& sent,
                                RequestPtr& received) {
  const int c = ring_.size(), r = ring_.rank();
  timed(times_.tp.ring, [&] {
    received = ring_.start_recv(receive, size_t(count), (r + c - 1) % c, tag);
    sent = ring_.start_send(send, size_t(count), (r + 1) % c, tag);
  });
}

void ContextRingAttention::forward(float* out, float* lse, const float* qkv) {
  const int64_t c = ring_.size(), r = ring_.rank(), rows = B_ * Tl_;
  timed(times_.ops.attention, [&] {
    // This rank's block: the k and v of each row, contiguous in qkv.
    for (int64_t i = 0; i < rows; ++i) std::copy_n(qkv + i * 3 * C_ + C_, 2 * C_, kv_[0].data() + i * 2 * C_);
    std::fill_n(out, rows * C_, 0.0f);
    std::fill(max_.begin(), max_.end(), -std::numeric_limits<float>::infinity());
    std::fill(sum_.begin(), sum_.end(), 0.0f);
  });
  RequestPtr sent, received;
  for (int64_t s = 0; s < c; ++s) {
    const float* held = kv_[s % 2].data();
    if (s + 1 < c) pass(held, kv_[(s + 1) % 2].data(), rows * 2 * C_, kKeyValueTag, sent, received);
    timed(times_.ops.attention, [&] { forward_block(out, qkv, held, (r - s + c) % c); });
    wait(sent), wait(received);
  }
  timed(times_.ops.attention, [&] {
    for (int64_t b = 0; b < B_; ++b) {
      for (int64_t h = 0; h < NH_; ++h) {
        for (int64_t t = 0; t < Tl_; ++t) {
          const int64_t at = (b * NH_ + h) * Tl_ + t;
          Row(out + (b * Tl_ + t) * C_ + h * hs_, hs_) /= sum_[size_t(at)];
          lse[at] = max_[size_t(at)] + std::log(sum_[size_t(at)]);
        }
      }
    }
  });
}

// Online softmax: per query row, m_new = max(m, row max), the row's
// probabilities e^(s − m_new), l ← l·e^(m − m_new) + Σ, out ← out·e^(m − m_new) + P·V.
void ContextRingAttention::forward_block(float* out, const float* qkv, const float* kv, int64_t owner) {
  const float scale = 1.0f / std::sqrt(float(hs_));
  float* S = scores_.data();
  for (int64_t b = 0; b < B_; ++b) {
    for (int64_t h = 0; h < NH_; ++h) {
      for (int64_t qh = 0; qh < chunks_.halves(); ++qh) {
        const float* q = qkv + (b * Tl_ + qh * Tc_) * 3 * C_ + h * hs_;
        float* o = out + (b * Tl_ + qh * Tc_) * C_ + h * hs_;
        float* m = max_.data() + (b * NH_ + h) * Tl_ + qh * Tc_;
        float* l = sum_.data() + (b * NH_ + h) * Tl_ + qh * Tc_;
        for (int64_t kh = 0; kh < chunks_.halves(); ++kh) {
          const int visible = visibility(qh, owner, kh);
          if (visible == 0) continue;
          const float* k = kv + (b * Tl_ + kh * Tc_) * 2 * C_ + h * hs_;
          cpu::gemm(false, true, Tc_, Tc_, hs_, scale, q, 3 * C_, k, 2 * C_, 0.0f, S, Tc_);
          for (int64_t t = 0; t < Tc_; ++t) {
            const int64_t n = visible == 1 ? t + 1 : Tc_;
            Row row(S + t * Tc_, n);
            const float m_new = std::max(m[t], row.maxCoeff());
            const float rescale = std::exp(m[t] - m_new);  // 0 before the first block
            row = (row - m_new).exp();
            std::fill(S + t * Tc_ + n, S + (t + 1) * Tc_, 0.0f);
            l[t] = l[t] * rescale + row.sum();
            m[t] = m_new;
            Row(o + t * C_, hs_) *= rescale;
          }
          cpu::gemm(false, false, Tc_, hs_, Tc_, 1.0f, S, Tc_, k + C_, 2 * C_, 1.0f, o, C_);
        }
      }
    }
  }
}

void ContextRingAttention::backward(float* dqkv, const float* dout, const float* qkv, const float* out,
                                    const float* lse) {
  const int64_t c = ring_.size(), r = ring_.rank(), rows = B_ * Tl_, count = rows * 2 * C_;
  float *own = dkv_[0].data(), *received_sums = dkv_[1].data(), *onward = dkv_[2].data();
  timed(times_.ops.attention, [&] {
    for (int64_t i = 0; i < rows; ++i) std::copy_n(qkv + i * 3 * C_ + C_, 2 * C_, kv_[0].data() + i * 2 * C_);
    // D = rowsum(dO ⊙ O) per head, in max_'s place.
    for (int64_t b = 0; b < B_; ++b) {
      for (int64_t h = 0; h < NH_; ++h) {
        for (int64_t t = 0; t < Tl_; ++t) {
          const int64_t at = (b * Tl_ + t) * C_ + h * hs_;
          max_[size_t((b * NH_ + h) * Tl_ + t)] =
              (Eigen::Map<const Eigen::ArrayXf>(dout + at, hs_) * Eigen::Map<const Eigen::ArrayXf>(out + at, hs_)).sum();
        }
      }
    }
  });
  RequestPtr sent_kv, received_kv, sent_sums, receiving_sums;
  const int next = int((r + 1) % c), previous = int((r + c - 1) % c);
  for (int64_t s = 0; s < c; ++s) {
    const float* held = kv_[s % 2].data();
    if (s + 1 < c) pass(held, kv_[(s + 1) % 2].data(), count, kKeyValueTag, sent_kv, received_kv);
    // The held block's dK, dV summed by the ranks it visited before (none at step 0: it is ours).
    if (s > 0) receiving_sums = ring_.start_recv(received_sums, size_t(count), previous, kGradientTag);
    timed(times_.ops.attention, [&] {
      std::fill_n(own, count, 0.0f);
      backward_block(dqkv, own, dout, qkv, held, lse, (r - s + c) % c);
    });
    wait(receiving_sums), wait(sent_sums);
    timed(times_.ops.attention, [&] {
      if (s == 0) std::copy_n(own, count, onward);
      for (int64_t i = 0; s > 0 && i < count; ++i) onward[i] = received_sums[i] + own[i];
    });
    sent_sums = ring_.start_send(onward, size_t(count), next, kGradientTag);
    wait(sent_kv), wait(received_kv);
  }
  // After c steps this rank's own block comes home with every rank's part.
  receiving_sums = ring_.start_recv(received_sums, size_t(count), previous, kGradientTag);
  wait(receiving_sums), wait(sent_sums);
  timed(times_.ops.attention, [&] {
    for (int64_t i = 0; i < rows; ++i) {
      Row(dqkv + i * 3 * C_ + C_, 2 * C_) += Eigen::Map<const Eigen::ArrayXf>(received_sums + i * 2 * C_, 2 * C_);
    }
  });
}

// Flash attention's backward on one block: P from lse, dV += Pᵀ·dO, dP = dO·Vᵀ,
// dS = P ⊙ (dP − D)·scale, dQ += dS·K, dK += dSᵀ·Q (dK, dV into dkv [B·Tl, 2C]).
void ContextRingAttention::backward_block(float* dqkv, float* dkv, const float* dout, const float* qkv,
                                          const float* kv, const float* lse, int64_t owner) {
  const float scale = 1.0f / std::sqrt(float(hs_));
  float *P = scores_.data(), *dS = dscores_.data();
  for (int64_t b = 0; b < B_; ++b) {
    for (int64_t h = 0; h < NH_; ++h) {
      for (int64_t qh = 0; qh < chunks_.halves(); ++qh) {
        const int64_t first = b * Tl_ + qh * Tc_;
        const float* q = qkv + first * 3 * C_ + h * hs_;
        const float* dO = dout + first * C_ + h * hs_;
        float* dq = dqkv + first * 3 * C_ + h * hs_;
        const float* L = lse + (b * NH_ + h) * Tl_ + qh * Tc_;
        const float* D = max_.data() + (b * NH_ + h) * Tl_ + qh * Tc_;
        for (int64_t kh = 0; kh < chunks_.halves(); ++kh) {
          const int visible = visibility(qh, owner, kh);
          if (visible == 0) continue;
          const float* k = kv + (b * Tl_ + kh * Tc_) * 2 * C_ + h * hs_;
          float* dk = dkv + (b * Tl_ + kh * Tc_) * 2 * C_ + h * hs_;
          cpu::gemm(false, true, Tc_, Tc_, hs_, scale, q, 3 * C_, k, 2 * C_, 0.0f, P, Tc_);
          for (int64_t t = 0; t < Tc_; ++t) {
            const int64_t n = visible == 1 ? t + 1 : Tc_;
            Row(P + t * Tc_, n) = (Row(P + t * Tc_, n) - L[t]).exp();
            std::fill(P + t * Tc_ + n, P + (t + 1) * Tc_, 0.0f);
          }
          cpu::gemm(false, true, Tc_, Tc_, hs_, 1.0f, dO, C_, k + C_, 2 * C_, 0.0f, dS, Tc_);
          cpu::gemm(true, false, Tc_, hs_, Tc_, 1.0f, P, Tc_, dO, C_, 1.0f, dk + C_, 2 * C_);
          for (int64_t t = 0; t < Tc_; ++t) {
            Row(dS + t * Tc_, Tc_) = Row(P + t * Tc_, Tc_) * (Row(dS + t * Tc_, Tc_) - D[t]) * scale;
          }
          cpu::gemm(false, false, Tc_, hs_, Tc_, 1.0f, dS, Tc_, k, 2 * C_, 1.0f, dq, 3 * C_);
          cpu::gemm(true, false, Tc_, hs_, Tc_, 1.0f, dS, Tc_, q, 3 * C_, 1.0f, dk, 2 * C_);
        }
      }
    }
  }
}

}  // namespace axo
