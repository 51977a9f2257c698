// The sharded optimizer over the data ranks (see zero_optimizer.h).
#include "executor/parallel/zero_optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "executor/cpu/adamw.h"
#include "executor/timer.h"
#include "executor/train/loss_scaler.h"

namespace axo {

namespace {

// The one place this file converts between fp32 and the storage format of
// the weights and gradients: fp32 is copied; a 2-byte format (bf16 or fp16,
// cpu/half.h) is widened exactly and narrowed rounding to nearest even.
void storage_to_fp32(ShardGrad storage, int64_t offset, int64_t n, float* out) {
  if (storage.f32) return (void)std::copy_n(storage.f32 + offset, n, out);
  widen(ShardView(storage.half + offset, storage.format), out, n);
}

void fp32_to_storage(const float* in, int64_t n, ShardGrad storage, int64_t offset) {
  if (storage.f32) return (void)std::copy_n(in, n, storage.f32 + offset);
  cpu::to_half(in, storage.half + offset, n, storage.format);
}

// Bytes of one stored element, and where element i's bytes start (the all-gather moves them as they are).
size_t element_bytes(ShardGrad storage) { return storage.f32 ? sizeof(float) : sizeof(cpu::Half); }
char* bytes_at(ShardGrad storage, int64_t i) {
  return storage.f32 ? reinterpret_cast<char*>(storage.f32 + i) : reinterpret_cast<char*>(storage.half + i);
}

}  // namespace

std::vector<ZeroUnit> zero_units(const ShardLayout& layout, bool tied_embedding, int d, int D) {
  std::vector<ZeroUnit> units;
  auto add = [&](size_t bucket, GradientGroup group, int64_t offset, int64_t size, bool tied) {
    if (size == 0) return;
    ZeroUnit u;
    u.offset = offset, u.size = size, u.bucket = bucket, u.group = group, u.tied = tied;
    u.piece = (size + D - 1) / D;
    u.shard_offset = units.empty() ? 0 : units.back().shard_offset + units.back().piece;
    u.begin = std::min(offset + size, offset + d * u.piece);
    u.end = std::min(offset + size, u.begin + u.piece);
    units.push_back(u);
  };
  const std::vector<GradientBucket>& buckets = layout.buckets();
  for (size_t k = 0; k < buckets.size(); ++k) {
    const GradientBucket& b = buckets[k];
    int64_t start = b.offset;  // of the run not yet made a unit
    for (const LocalTensor& t : layout.tensors()) {
      if (!tied_embedding || !t.tied || t.offset < b.offset || t.offset >= b.offset + b.size) continue;
      add(k, b.group, start, t.offset - start, false);
      add(k, b.group, t.offset, t.size, true);
      start = t.offset + t.size;
    }
    add(k, b.group, start, b.offset + b.size - start, false);
  }
  return units;
}


ZeroOptimizer::ZeroOptimizer(const ShardLayout& layout, const ShardLayout& replica_owner_layout,
                             const ProcessGrid& grid, ShardGrad parameters, ShardGrad gradients, DeviceMemory& device,
                             DeviceMemory& host, PhaseTimes& times, int threads)
    : layout_(layout),
      owner_layout_(replica_owner_layout),
      grid_(grid),
      parameters_(parameters),
      gradients_(gradients),
      per_microbatch_(grid.config().zero >= 2),
      reduced_(gradients),
      shard_f32_({device, DeviceUse::gradients}),
      shard_half_({device, DeviceUse::gradients}),
      device_(device),
      host_(host),
      times_(times),
      threads_(threads),
      offload_(grid.config().offload),
      m_({offload_ ? host : device, DeviceUse::optimizer}),
      v_(m_.get_allocator()),
      // With offload the masters are the host's weights; in 2-byte storage on the device, optimizer state.
      master_(offload_ ? DeviceAllocator<float>(host, DeviceUse::weights)
                       : DeviceAllocator<float>(device, DeviceUse::optimizer)) {
  if (!per_microbatch_ && bool(parameters.f32) != bool(gradients.f32)) {
    throw std::logic_error("ZeroOptimizer: weights and gradients in one format");
  }
  units_ = zero_units(layout, grid.embedding() != nullptr, grid.data_and_context().rank(), grid.data_and_context().size());
  shard_size_ = units_.empty() ? 0 : units_.back().shard_offset + units_.back().piece;
  if (per_microbatch_) {
    // The gradient shard in the weights' storage format: e bytes per shard element, as the memory model charges.
    if (parameters.f32) {
      shard_f32_.assign(size_t(shard_size_), 0.0f), reduced_ = ShardGrad(shard_f32_.data());
    } else {
      shard_half_.assign(size_t(shard_size_), cpu::Half{}), reduced_ = ShardGrad(shard_half_.data(), parameters.format);
    }
  }
  m_.assign(size_t(shard_size_), 0.0f);
  v_.assign(size_t(shard_size_), 0.0f);
  if (offload_ || !parameters.f32) master_.assign(size_t(shard_size_), 0.0f);
}

// A unit summed over Z (or, with sequence parallelism, Y × Z) besides data: that part's group.
Communicator* ZeroOptimizer::other_part(GradientGroup group) const {
  Communicator* part = group == GradientGroup::z_and_data     ? &grid_.z()
                       : group == GradientGroup::y_z_and_data ? &grid_.y_and_z()
                                                              : nullptr;
  return part != nullptr && part->size() > 1 ? part : nullptr;
}

// The unit in fp32, padded to D whole pieces (widened from 2-byte storage: the reductions run in fp32).
ZeroOptimizer::Pending& ZeroOptimizer::stage_unit(size_t unit, ShardGrad source, int64_t offset, bool may_alias) {
  const DeviceAllocator<float> buffers(device_, DeviceUse::comm_buffers);
  pending_.push_back({unit, nullptr, false, DeviceFloats(buffers), DeviceFloats(buffers), nullptr});
  Pending& p = pending_.back();
  const ZeroUnit& u = units_[unit];
  const int D = grid_.data_and_context().size();
  if (may_alias && source.f32 && u.piece * D == u.size) {
    p.source = source.f32 + offset;
    return p;
  }
  p.send.assign(size_t(u.piece * D), 0.0f);
  storage_to_fp32(source, offset, u.size, p.send.data());
  p.source = p.send.data();
  return p;
}

void ZeroOptimizer::start_reduce_scatter(Pending& p, Communicator& group) {
  const ZeroUnit& u = units_[p.unit];
  p.received.assign(size_t(u.piece), 0.0f);
  p.request = group.start_reduce_scatter(p.source, p.received.data(), size_t(u.piece));
  p.scatter_next = false;
}

void ZeroOptimizer::start_step() {
  std::fill(shard_f32_.begin(), shard_f32_.end(), 0.0f);
  std::fill(shard_half_.begin(), shard_half_.end(), cpu::Half{});
}

void ZeroOptimizer::reduce_microbatch(size_t bucket, ShardGrad gradients) {
  const int D = grid_.data_and_context().size();
  const int64_t bucket_offset = layout_.buckets()[bucket].offset;
  timed(times_.dp_comm, [&] {
    for (size_t i = 0; i < units_.size(); ++i) {
      const ZeroUnit& u = units_[i];
      if (u.bucket != bucket) continue;
      // Always a copy: the bucket's buffer goes back on return.
      Pending& p = stage_unit(i, gradients, u.offset - bucket_offset, false);
      // The Z or Y part first, blocking: that group's ranks run this stage's backwards in one order.
      if (Communicator* part = other_part(u.group)) part->all_reduce(p.source, size_t(u.piece * D));
      start_reduce_scatter(p, grid_.data_and_context());
    }
    // Every replica issues the same sequence of reduce-scatters (the header): waiting keeps one bucket's
    // fp32 copies in flight.
    for (Pending& p : pending_) p.request->wait(), add_to_shard(p);
    pending_.clear();
  });
}

void ZeroOptimizer::add_to_shard(const Pending& p) {
  const ZeroUnit& u = units_[p.unit];
  add_to(reduced_ + u.shard_offset, p.received.data(), u.end - u.begin);
}

void ZeroOptimizer::start_bucket(size_t bucket) {
  timed(times_.dp_comm, [&] {
    for (size_t i = 0; i < units_.size(); ++i) {
      if (units_[i].bucket != bucket) continue;
      Pending& p = stage_unit(i, gradients_, units_[i].offset, true);
      if (Communicator* part = other_part(units_[i].group)) {
        p.request = part->start_all_reduce(p.source, size_t(units_[i].piece * grid_.data_and_context().size()));
        p.scatter_next = true;
      } else {
        start_reduce_scatter(p, grid_.data_and_context());
      }
    }
  });
}

void ZeroOptimizer::finish_reduction() {
  piece_factor_ = 1;  // this step's pieces, not yet scaled
  if (per_microbatch_) return finish_shard();
  timed(times_.dp_comm, [&] {
    for (Pending& p : pending_) {
      if (!p.scatter_next) continue;
      p.request->wait();
      start_reduce_scatter(p, grid_.data_and_context());
    }
    Communicator* embedding = grid_.embedding();
    for (Pending& p : pending_) {
      p.request->wait();
      const ZeroUnit& u = units_[p.unit];
      // The tied embedding: the first stage's piece (lookup) plus the last's (head), the same piece on both.
      if (u.tied && embedding) embedding->all_reduce(p.received.data(), size_t(u.piece));
      fp32_to_storage(p.received.data(), u.end - u.begin, gradients_, u.begin);
    }
    pending_.clear();
  });
}

// Zero 2 (every microbatch's pieces already in the shard): the tied embedding's sum between the first and
// last stage.
void ZeroOptimizer::finish_shard() {
  timed(times_.dp_comm, [&] {
    Communicator* embedding = grid_.embedding();
    if (!embedding) return;
    std::vector<float> piece;
    for (const ZeroUnit& u : units_) {
      if (!u.tied) continue;
      piece.assign(size_t(u.piece), 0.0f);
      storage_to_fp32(reduced_, u.shard_offset, u.end - u.begin, piece.data());
      embedding->all_reduce(piece.data(), piece.size());
      fp32_to_storage(piece.data(), u.end - u.begin, reduced_, u.shard_offset);
    }
  });
}

// The fp32 gradients of u's piece: the buffer itself in fp32 on the device, else a copy in `window`
// (widened from 2-byte storage; with offload, brought down to the host).
const float* ZeroOptimizer::piece_gradients(const ZeroUnit& u, DeviceFloats& window) const {
  if (reduced_.f32 && !offload_) return reduced_.f32 + piece_offset(u);
  window.resize(size_t(u.end - u.begin));
  storage_to_fp32(reduced_, piece_offset(u), u.end - u.begin, window.data());
  if (piece_factor_ != 1) {
    for (float& g : window) g *= piece_factor_;
  }
  return window.data();
}

bool ZeroOptimizer::pieces_overflow() const {
  DeviceFloats window({offload_ ? host_ : device_, DeviceUse::gradients});
  for (const ZeroUnit& u : units_) {
    if (has_inf_or_nan(piece_gradients(u, window), u.end - u.begin)) return true;
  }
  return false;
}

// fp32 pieces are scaled in place; 2-byte ones keep the factor aside, applied
// as piece_gradients() widens them: unscaled in place, fp16 gradients below
// 2^-14 would lose bits and those below 2^-24 become zero (as ParallelGpt's
// half_gradient_factor_ without zero).
void ZeroOptimizer::scale_pieces(float factor) {
  if (!reduced_.f32) return (void)(piece_factor_ *= factor);
  for (const ZeroUnit& u : units_) {
    float* piece = reduced_.f32 + piece_offset(u);
    for (int64_t i = 0; i < u.end - u.begin; ++i) piece[i] *= factor;
  }
}

void ZeroOptimizer::inject_overflow() {
  const float inf = std::numeric_limits<float>::infinity();
  for (const ZeroUnit& u : units_) {
    if (u.begin < u.end) return fp32_to_storage(&inf, 1, reduced_, piece_offset(u));
  }
}

double ZeroOptimizer::clip_gradients(double max_norm) {
  double norm = 0;
  timed(times_.optimizer, [&] {
    DeviceFloats window({offload_ ? host_ : device_, DeviceUse::gradients});
    double local = 0;
    for (const ZeroUnit& u : units_) {
      const float* piece = piece_gradients(u, window);
      for (const LocalTensor& t : owner_layout_.tensors()) {
        if (!t.owned) continue;
        const int64_t from = std::max(u.begin, t.offset), to = std::min(u.end, t.offset + t.size);
        for (int64_t i = from; i < to; ++i) {
          const double g = piece[i - u.begin];
          local += g * g;
        }
      }
    }
    float sum = float(local);
    grid_.world().all_reduce(&sum, 1);
    norm = std::sqrt(double(sum));
    if (max_norm > 0 && norm > max_norm) scale_pieces(float(max_norm / norm));
  });
  return norm;
}

void ZeroOptimizer::adamw(long step, double lr, double weight_decay) {
  cpu::AdamWSettings settings;
  settings.learning_rate = float(lr);
  timed(times_.optimizer, [&] {
    DeviceFloats window({offload_ ? host_ : device_, DeviceUse::gradients});
    for (const ZeroUnit& u : units_) {
      // This rank's elements of each tensor of the unit, relative to the piece's start.
      std::vector<cpu::AdamWRange> ranges;
      for (const LocalTensor& t : layout_.tensors()) {
        const int64_t from = std::max(u.begin, t.offset), to = std::min(u.end, t.offset + t.size);
        if (from < to) ranges.push_back({from - u.begin, to - from, t.decayed ? float(weight_decay) : 0.0f});
      }
      if (ranges.empty()) continue;
      const size_t s = size_t(u.shard_offset);
      float* weights = master_.empty() ? parameters_.f32 + u.begin : master_.data() + s;
      cpu::adamw_update_ranges(weights, piece_gradients(u, window), m_.data() + s, v_.data() + s, ranges, settings,
                               step, threads_);
    }
  });
  if (!master_.empty()) {
    timed(offload_ ? times_.offload : times_.optimizer, [&] {
      for (const ZeroUnit& u : units_) {
        fp32_to_storage(master_.data() + u.shard_offset, u.end - u.begin, parameters_, u.begin);
      }
    });
  }
  timed(times_.dp_comm, [&] { all_gather_weights(); });
}

// Unit by unit, so the receive buffer is one unit's. The pieces travel in the
// storage format, 2 bytes per element in bf16: what the cost model charges
// for the updated parameters' all-gather (model/cost_data_parallel.cc,
// shard_over_data: the plan's element bytes), and enough, since every rank
// rounds its own piece from its masters and the stored weights are those
// roundings (gathering the fp32 masters would move twice the bytes for the
// same bf16 weights). The communicator moves float32 words: a piece is
// padded to whole words and its bytes are copied as they are.
void ZeroOptimizer::all_gather_weights() {
  const int D = grid_.data_and_context().size();
  const int64_t e = int64_t(element_bytes(parameters_));
  auto words = [&](int64_t elements) { return (elements * e + 3) / 4; };
  int64_t largest = 0;
  for (const ZeroUnit& u : units_) largest = std::max(largest, u.piece);
  DeviceFloats send({device_, DeviceUse::comm_buffers}), receive({device_, DeviceUse::comm_buffers});
  send.assign(size_t(words(largest)), 0.0f);
  receive.assign(size_t(words(largest) * D), 0.0f);
  for (const ZeroUnit& u : units_) {
    const int64_t w = words(u.piece);
    std::fill_n(send.data(), w, 0.0f);
    std::memcpy(send.data(), bytes_at(parameters_, u.begin), size_t((u.end - u.begin) * e));
    grid_.data_and_context().all_gather(send.data(), receive.data(), size_t(w));
    for (int r = 0; r < D; ++r) {
      const int64_t from = u.offset + r * u.piece, count = std::min(u.piece, u.offset + u.size - from);
      if (count > 0) std::memcpy(bytes_at(parameters_, from), receive.data() + r * w, size_t(count * e));
    }
  }
}

void ZeroOptimizer::load_master(const float* local_weights) {
  if (master_.empty()) return;
  for (const ZeroUnit& u : units_) {
    std::copy_n(local_weights + u.begin, u.end - u.begin, master_.data() + u.shard_offset);
  }
}

void ZeroOptimizer::load_moments(const float* local_m, const float* local_v) {
  for (const ZeroUnit& u : units_) {
    std::copy_n(local_m + u.begin, u.end - u.begin, m_.data() + u.shard_offset);
    std::copy_n(local_v + u.begin, u.end - u.begin, v_.data() + u.shard_offset);
  }
}

std::vector<float> ZeroOptimizer::local_master_weights() const {
  if (!master_.empty()) return gather_local(master_.data());
  return std::vector<float>(parameters_.f32, parameters_.f32 + layout_.size());  // fp32: the weights themselves
}

// Each element is in one data rank's piece: the others add zeros.
std::vector<float> ZeroOptimizer::local_gradients() const {
  std::vector<float> local(size_t(layout_.size()), 0.0f);
  for (const ZeroUnit& u : units_) storage_to_fp32(reduced_, piece_offset(u), u.end - u.begin, local.data() + u.begin);
  for (float& g : local) g *= piece_factor_;
  grid_.data_and_context().all_reduce(local.data(), local.size());
  return local;
}

std::vector<float> ZeroOptimizer::gather_local(const float* shard) const {
  const int D = grid_.data_and_context().size();
  std::vector<float> local(size_t(layout_.size()), 0.0f), receive;
  for (const ZeroUnit& u : units_) {
    receive.assign(size_t(u.piece * D), 0.0f);
    grid_.data_and_context().all_gather(shard + u.shard_offset, receive.data(), size_t(u.piece));
    std::copy_n(receive.data(), u.size, local.data() + u.offset);
  }
  return local;
}

}  // namespace axo
