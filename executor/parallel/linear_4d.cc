// The 4D tensor-parallel linear layer (see linear_4d.h).
#include "executor/parallel/linear_4d.h"

#include <algorithm>
#include <utility>

#include "executor/cpu/gemm_precision.h"
#include "executor/timer.h"

namespace axo {

void Linear4dScratch::finish_reducing() {
  if (reducing_) reducing_->finish_gradient();
}

Linear4d::Linear4d(Communicator& in, Communicator& out, Communicator& z, int64_t n_local, int64_t k_local,
                   const Overlap& overlap, bool sequence_parallel, PhaseTimes& times, Linear4dScratch& scratch,
                   Precision precision)
    : in_(in),
      out_(out),
      z_(z),
      n_(n_local),
      k_(k_local),
      overlap_(overlap),
      sequence_parallel_(sequence_parallel),
      precision_(precision),
      times_(times),
      gathered_(scratch.allocator()),
      dblock_(scratch.allocator()),
      dchunk_part_(scratch.allocator()),
      gathered_half_(DeviceAllocator<cpu::Half>(scratch.allocator())),
      small_(scratch.allocator()),
      scratch_(scratch) {
  const int64_t Gz = z.size();
  chunk_ = (n_ * k_ + Gz - 1) / Gz;
}

void Linear4d::gather(ShardView chunk, bool started) {
  const size_t count = size_t(chunk_), block = count * size_t(z_.size());
  if (chunk.half && gathered_half_.empty()) gathered_half_ = scratch_.half_blocks.take(block);
  if (chunk.f32 && gathered_.empty()) gathered_ = scratch_.blocks.take(block);
  timed(times_.tp.all_gather, [&] {
    if (chunk.half && started) gather_ = z_.start_all_gather_halves(chunk.half, gathered_half_.data(), count);
    if (chunk.half && !started) z_.all_gather_halves(chunk.half, gathered_half_.data(), count);
    if (chunk.f32 && started) gather_ = z_.start_all_gather(chunk.f32, gathered_.data(), count);
    if (chunk.f32 && !started) z_.all_gather(chunk.f32, gathered_.data(), count);
  });
}

void Linear4d::prefetch(ShardView chunk) {
  if (overlap_.all_gather && z_.size() > 1 && !gather_) gather(chunk, true);
}

ShardView Linear4d::block(ShardView chunk) {
  if (z_.size() == 1) return chunk;
  if (gather_) {
    timed(times_.tp.all_gather, [&] { gather_->wait(); });
    gather_.reset();
  } else {
    gather(chunk, false);
  }
  return chunk.half ? ShardView(gathered_half_.data(), chunk.format) : ShardView(gathered_.data());
}

void Linear4d::release_block() {
  if (!gathered_.empty()) scratch_.blocks.give_back(std::move(gathered_));
  if (!gathered_half_.empty()) scratch_.half_blocks.give_back(std::move(gathered_half_));
  gathered_.clear(), gathered_half_.clear();
}

void Linear4d::forward(float* out, const float* in, ShardView chunk, ShardView bias_view, int64_t m) {
  const ShardView w = block(chunk);
  const bool scatter_rows = sequence_parallel_ && in_.size() > 1;
  float* result = out;
  if (scatter_rows) {
    resize_exactly(scratch_.rows, size_t(m * n_));
    result = scratch_.rows.data();
  }
  timed(times_.ops.gemm, [&] { gemm_weights(precision_, false, true, m, n_, k_, in, k_, w, k_, 0.0f, result, n_); });
  release_block();
  int64_t rows = m;
  if (scatter_rows) {
    rows = m / in_.size();
    timed(times_.tp.reduce_scatter, [&] { in_.reduce_scatter(result, out, size_t(rows * n_)); });
  } else if (in_.size() > 1) {
    timed(times_.tp.all_reduce, [&] { in_.all_reduce(out, size_t(m * n_)); });
  }
  if (!bias_view) return;
  const float* bias = bias_view.f32;
  if (!bias) small_.resize(size_t(n_)), widen(bias_view, small_.data(), n_), bias = small_.data();
  timed(times_.ops.gemm, [&] {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n_; ++j) out[r * n_ + j] += bias[j];
    }
  });
}

void Linear4d::backward(float* din, ShardGrad dchunk, ShardGrad dbias, const float* dout, const float* in,
                        ShardView chunk, int64_t m) {
  if (sequence_parallel_ && in_.size() > 1) {
    // This rank holds m/|in| rows of dY; the GEMMs need all m.
    resize_exactly(scratch_.rows, size_t(m * n_));
    timed(times_.tp.all_gather, [&] { in_.all_gather(dout, scratch_.rows.data(), size_t(m / in_.size() * n_)); });
    dout = scratch_.rows.data();
  }
  const ShardView w = block(chunk);
  finish_gradient();  // this layer's last reduce-scatter, if nothing has finished it, owns its dW block
  const bool scatter_rows = sequence_parallel_ && out_.size() > 1;
  const int64_t din_rows = scatter_rows ? m / out_.size() : m;
  const bool reduce_dx = out_.size() > 1;
  // dX = dY · block: straight into din when there is nothing to reduce, else
  // into a buffer for the reduction ([m, k], then the reduce-scatter's rows).
  float *dx = din, *dx_rows = din;
  if (reduce_dx) {
    resize_exactly(scratch_.partial, size_t((m + (scatter_rows ? din_rows : 0)) * k_));
    dx = scratch_.partial.data();
    dx_rows = scatter_rows ? dx + m * k_ : dx;
  }
  timed(times_.ops.gemm, [&] {
    gemm_weights(precision_, false, false, m, k_, n_, dout, n_, w, k_, reduce_dx ? 0.0f : 1.0f, dx, k_);
  });
  release_block();
  RequestPtr dx_reduce;
  if (reduce_dx) {
    timed(scatter_rows ? times_.tp.reduce_scatter : times_.tp.all_reduce, [&] {
      // With overlap (OAR) the reduction runs under the dW GEMM below.
      const bool oar = overlap_.all_reduce;
      if (scatter_rows && oar) dx_reduce = out_.start_reduce_scatter(dx, dx_rows, size_t(din_rows * k_));
      if (scatter_rows && !oar) out_.reduce_scatter(dx, dx_rows, size_t(din_rows * k_));
      if (!scatter_rows && oar) dx_reduce = out_.start_all_reduce(dx, size_t(m * k_));
      if (!scatter_rows && !oar) out_.all_reduce(dx, size_t(m * k_));
    });
  }
  const bool split = z_.size() > 1;
  if (split) {
    // The whole dW block, from the pool until its reduce-scatter is done; the padding past n·k reduces as zeros.
    dblock_ = scratch_.blocks.take(size_t(chunk_ * z_.size()));
    std::fill(dblock_.begin() + n_ * k_, dblock_.end(), 0.0f);
  }
  timed(times_.ops.gemm, [&] {
    // dW = dYᵀ · X: into the chunk directly without a Z split, else into the whole block first.
    if (split) {
      cpu::gemm(precision_, true, false, n_, k_, m, 1.0f, dout, n_, in, k_, 0.0f, dblock_.data(), k_);
    } else {
      gemm_gradient(precision_, true, false, n_, k_, m, dout, n_, in, k_, dchunk, k_);
    }
    if (dbias) {
      // Column sums in fp32: into an fp32 dbias directly, else summed here and added rounded.
      float* sums = dbias.f32;
      if (!sums) small_.assign(size_t(n_), 0.0f), sums = small_.data();
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t j = 0; j < n_; ++j) sums[j] += dout[r * n_ + j];
      }
      if (!dbias.f32) add_to(dbias, sums, n_);
    }
  });
  if (split) {
    scratch_.finish_reducing();  // the layer before's, which ran under this one's GEMMs
    dchunk_part_ = scratch_.chunks.take(size_t(chunk_));
    timed(times_.tp.reduce_scatter, [&] {
      scatter_ = z_.start_reduce_scatter(dblock_.data(), dchunk_part_.data(), size_t(chunk_));
      scatter_target_ = dchunk;
    });
    scratch_.reducing(this);
    if (!overlap_.reduce_scatter) finish_gradient();
  }
  if (dx_reduce) timed(scatter_rows ? times_.tp.reduce_scatter : times_.tp.all_reduce, [&] { dx_reduce->wait(); });
  if (!reduce_dx) return;
  timed(times_.ops.gemm, [&] {
    for (int64_t i = 0; i < din_rows * k_; ++i) din[i] += dx_rows[i];
  });
}

void Linear4d::finish_gradient() {
  if (!scatter_) return;
  timed(times_.tp.reduce_scatter, [&] { scatter_->wait(); });
  scatter_.reset();
  timed(times_.ops.gemm, [&] { add_to(scatter_target_, dchunk_part_.data(), chunk_); });
  scratch_.blocks.give_back(std::move(dblock_)), dblock_.clear();
  scratch_.chunks.give_back(std::move(dchunk_part_)), dchunk_part_.clear();
  scratch_.finished(this);
}

}  // namespace axo
