// The vocabulary-parallel embedding, LM head and cross-entropy (see vocab_parallel_head.h).
#include "executor/parallel/vocab_parallel_head.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "executor/cpu/gemm.h"
#include "executor/timer.h"

namespace axo {

VocabSlice executor_vocab_slice(const GptShape& shape, const ParallelConfig& config, int64_t y_rank) {
  const TransformerSpec spec = gpt_spec(shape, shape.max_seq);
  if (shape.padded_vocab > padded_vocab(spec, config.y)) {
    throw std::logic_error("executor_vocab_slice: llm.c's padded vocabulary (" + std::to_string(shape.padded_vocab) +
                           ") exceeds the head's (" + std::to_string(padded_vocab(spec, config.y)) + ")");
  }
  return head_vocab_slice(spec, config.y, y_rank);
}

VocabParallelHead::VocabParallelHead(const GptShape& shape, const ProcessGrid& grid, PhaseTimes& times,
                                     DeviceMemory& memory, Precision precision)
    : grid_(grid),
      times_(times),
      slice_(executor_vocab_slice(shape, grid.config(), grid.coords().y)),
      Cx_(shape.channels / grid.config().x),
      V_(shape.vocab),
      sequence_parallel_(grid.config().sequence_parallel),
      precision_(precision),
      scratch_({memory, DeviceUse::activations}) {}

float* VocabParallelHead::scratch(int64_t elements) {
  if (int64_t(scratch_.size()) < elements) scratch_.assign(size_t(elements), 0.0f);
  return scratch_.data();
}

void VocabParallelHead::embed(float* out, const int* tokens, ShardView wte, ShardView wpe, int64_t m,
                              int64_t first_row, const ContextChunks& chunks) {
  Communicator& y = grid_.y();
  const int64_t mr = sequence_parallel_ ? m / y.size() : m;
  float* rows = sequence_parallel_ && y.size() > 1 ? scratch(m * Cx_) : out;
  timed(times_.ops.embedding, [&] {
    for (int64_t r = 0; r < m; ++r) {
      const int64_t t = tokens[r];
      float* o = rows + r * Cx_;
      if (t >= slice_.begin && t < slice_.end) {
        widen(wte + (t - slice_.begin) * Cx_, o, Cx_);
      } else {
        std::fill_n(o, Cx_, 0.0f);
      }
    }
  });
  if (y.size() > 1) {
    if (sequence_parallel_) {
      timed(times_.tp.reduce_scatter, [&] { y.reduce_scatter(rows, out, size_t(mr * Cx_)); });
    } else {
      timed(times_.tp.all_reduce, [&] { y.all_reduce(out, size_t(m * Cx_)); });
    }
  }
  timed(times_.ops.embedding, [&] {
    std::vector<float> wpe_row(static_cast<size_t>(Cx_));  // wpe's row, widened
    for (int64_t r = 0; r < mr; ++r) {
      widen(wpe + chunks.position((first_row + r) % chunks.local_length()) * Cx_, wpe_row.data(), Cx_);
      for (int64_t c = 0; c < Cx_; ++c) out[r * Cx_ + c] += wpe_row[size_t(c)];
    }
  });
}

void VocabParallelHead::embed_backward(ShardGrad dwte, ShardGrad dwpe, const float* dout, const int* tokens, int64_t m,
                                       int64_t first_row, const ContextChunks& chunks) {
  Communicator& y = grid_.y();
  const int64_t mr = sequence_parallel_ ? m / y.size() : m;
  const float* rows = dout;
  if (sequence_parallel_ && y.size() > 1) {
    float* gathered = scratch(m * Cx_);
    timed(times_.tp.all_gather, [&] { y.all_gather(dout, gathered, size_t(mr * Cx_)); });
    rows = gathered;
  }
  timed(times_.ops.embedding, [&] {
    for (int64_t r = 0; r < m; ++r) {
      const int64_t t = tokens[r];
      if (t < slice_.begin || t >= slice_.end) continue;
      add_to(dwte + (t - slice_.begin) * Cx_, rows + r * Cx_, Cx_);
    }
    for (int64_t r = 0; r < mr; ++r) {
      add_to(dwpe + chunks.position((first_row + r) % chunks.local_length()) * Cx_, dout + r * Cx_, Cx_);
    }
  });
}

void VocabParallelHead::logits(float* logits, float* lnf_rows, const float* lnf, ShardView wte, int64_t m) {
  Communicator& y = grid_.y();
  if (sequence_parallel_ && y.size() > 1) {
    timed(times_.tp.all_gather, [&] { y.all_gather(lnf, lnf_rows, size_t(m / y.size() * Cx_)); });
  }
  // Every row of the slice, padding included (as the serial model's Vp and the cost model's V'/y); the loss reads the real ones.
  const int64_t R = rows();
  timed(times_.ops.gemm, [&] { gemm_weights(precision_, false, true, m, R, Cx_, lnf_rows, Cx_, wte, Cx_, 0.0f, logits, R); });
  if (grid_.x().size() > 1) timed(times_.tp.all_reduce, [&] { grid_.x().all_reduce(logits, size_t(m * R)); });
}

double VocabParallelHead::cross_entropy(float* probs, const float* logits, const int* targets, int64_t m,
                                        int64_t first_row, int64_t count) {
  Communicator& y = grid_.y();
  const int64_t R = rows(), real = slice_.real_rows(), Y = y.size();
  // Per row: Σ exp as two floats (high part, the rest: a double's precision through a float sum), the target's logit − max.
  std::vector<float> maxima(size_t(m * Y), -INFINITY), sums(size_t(3 * m), 0.0f);
  timed(times_.ops.loss, [&] {
    for (int64_t r = 0; r < m; ++r) {
      const float* z = logits + r * R;
      for (int64_t v = 0; v < real; ++v) maxima[size_t(r)] = std::max(maxima[size_t(r)], z[v]);
    }
  });
  // Every rank's row maxima, then the global one per row.
  if (Y > 1) {
    std::vector<float> mine(maxima.begin(), maxima.begin() + m);
    timed(times_.tp.all_gather, [&] { y.all_gather(mine.data(), maxima.data(), size_t(m)); });
  }
  std::vector<float> maximum(size_t(m), -INFINITY);
  for (int64_t k = 0; k < Y; ++k) {
    for (int64_t r = 0; r < m; ++r) maximum[size_t(r)] = std::max(maximum[size_t(r)], maxima[size_t(k * m + r)]);
  }
  timed(times_.ops.loss, [&] {
    for (int64_t r = 0; r < m; ++r) {
      const float* z = logits + r * R;
      float* p = probs + r * R;
      double sum = 0;
      for (int64_t v = 0; v < real; ++v) sum += p[v] = std::exp(z[v] - maximum[size_t(r)]);
      std::fill(p + real, p + R, 0.0f);
      sums[size_t(r)] = float(sum);
      sums[size_t(m + r)] = float(sum - double(sums[size_t(r)]));
      const int64_t t = targets[r];
      if (t >= slice_.begin && t < slice_.end) sums[size_t(2 * m + r)] = z[t - slice_.begin] - maximum[size_t(r)];
    }
  });
  if (Y > 1) timed(times_.tp.all_reduce, [&] { y.all_reduce(sums.data(), sums.size()); });
  double loss = 0;
  timed(times_.ops.loss, [&] {
    for (int64_t r = 0; r < m; ++r) {
      const double sum = double(sums[size_t(r)]) + double(sums[size_t(m + r)]);
      for (int64_t v = 0; v < real; ++v) probs[r * R + v] = float(probs[r * R + v] / sum);
      if (r >= first_row && r < first_row + count) loss += std::log(sum) - double(sums[size_t(2 * m + r)]);
    }
  });
  return loss;
}

void VocabParallelHead::backward(float* dlnf, float* dlnf_rows, float* dlogits, ShardGrad dwte, const float* probs,
                                 const int* targets, const float* lnf_rows, ShardView wte, int64_t m,
                                 double scale) {
  Communicator& y = grid_.y();
  const int64_t R = rows(), real = slice_.real_rows();
  // As the serial model: (probs − onehot) / m per token, then scaled by scale · m (m cancels, up to round-off).
  const float per_row = 1.0f / float(m), rescale = float(scale * double(m));
  timed(times_.ops.loss, [&] {
    for (int64_t r = 0; r < m; ++r) {
      float* d = dlogits + r * R;
      const float* p = probs + r * R;
      const int64_t target = targets[r] - slice_.begin;
      for (int64_t v = 0; v < R; ++v) {
        d[v] = v < real ? per_row * (p[v] - (v == target ? 1.0f : 0.0f)) * rescale : 0.0f;
      }
    }
  });
  const bool scatter = sequence_parallel_ && y.size() > 1;
  float* partial = scatter ? dlnf_rows : dlnf;
  // Over all R rows, the padding's zero gradients included, as the serial model runs them.
  timed(times_.ops.gemm, [&] {
    gemm_weights(precision_, false, false, m, Cx_, R, dlogits, R, wte, Cx_, 0.0f, partial, Cx_);
    gemm_gradient(precision_, true, false, R, Cx_, m, dlogits, R, lnf_rows, Cx_, dwte, Cx_);
  });
  if (scatter) {
    timed(times_.tp.reduce_scatter, [&] { y.reduce_scatter(partial, dlnf, size_t(m / y.size() * Cx_)); });
  } else if (y.size() > 1) {
    timed(times_.tp.all_reduce, [&] { y.all_reduce(dlnf, size_t(m * Cx_)); });
  }
}

}  // namespace axo
