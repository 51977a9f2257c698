// The sharded optimizer over the data ranks (see zero_optimizer.h).
#include "executor/parallel/zero_optimizer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "executor/cpu/adamw.h"
#include "executor/timer.h"

namespace axo {

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
                             const ProcessGrid& grid, float* parameters, float* gradients, DeviceMemory& device,
                             DeviceMemory& host, PhaseTimes& times, int threads)
    : layout_(layout),
      owner_layout_(replica_owner_layout),
      grid_(grid),
      parameters_(parameters),
      gradients_local_(gradients),
      device_(device),
      times_(times),
      threads_(threads),
      offload_(grid.config().offload),
      gradients_({offload_ ? host : device, DeviceUse::gradients}),
      m_({offload_ ? host : device, DeviceUse::optimizer}),
      v_(m_.get_allocator()),
      master_({host, DeviceUse::weights}) {
  if (grid.config().sequence_parallel && grid.config().z != 1) {
    throw std::logic_error("ZeroOptimizer: sequence parallelism runs with z = 1");
  }
  units_ = zero_units(layout, grid.embedding() != nullptr, grid.data_and_context().rank(), grid.data_and_context().size());
  shard_size_ = units_.empty() ? 0 : units_.back().shard_offset + units_.back().piece;
  gradients_.assign(size_t(shard_size_), 0.0f);
  m_.assign(size_t(shard_size_), 0.0f);
  v_.assign(size_t(shard_size_), 0.0f);
  if (offload_) master_.assign(size_t(shard_size_), 0.0f);
}

// A unit summed over Z (or, with sequence parallelism, Y) besides data: that part's group.
Communicator* ZeroOptimizer::other_part(GradientGroup group) const {
  Communicator* part = group == GradientGroup::z_and_data     ? &grid_.z()
                       : group == GradientGroup::y_z_and_data ? &grid_.y()
                                                              : nullptr;
  return part != nullptr && part->size() > 1 ? part : nullptr;
}

void ZeroOptimizer::start_reduce_scatter(Pending& p) {
  const ZeroUnit& u = units_[p.unit];
  const int D = grid_.data_and_context().size();
  const float* send = gradients_local_ + u.offset;
  if (u.piece * D != u.size) {  // pad the unit to D whole pieces
    p.staging.assign(size_t(u.piece * D), 0.0f);
    std::copy_n(send, u.size, p.staging.data());
    send = p.staging.data();
  }
  p.request = grid_.data_and_context().start_reduce_scatter(send, gradients_.data() + u.shard_offset, size_t(u.piece));
  p.scatter_next = false;
}

void ZeroOptimizer::start_bucket(size_t bucket) {
  timed(times_.dp_comm, [&] {
    for (size_t i = 0; i < units_.size(); ++i) {
      if (units_[i].bucket != bucket) continue;
      pending_.push_back({i, nullptr, false, DeviceFloats({device_, DeviceUse::comm_buffers})});
      Pending& p = pending_.back();
      if (Communicator* part = other_part(units_[i].group)) {
        p.request = part->start_all_reduce(gradients_local_ + units_[i].offset, size_t(units_[i].size));
        p.scatter_next = true;
      } else {
        start_reduce_scatter(p);
      }
    }
  });
}

void ZeroOptimizer::finish_reduction() {
  timed(times_.dp_comm, [&] {
    for (Pending& p : pending_) {
      if (!p.scatter_next) continue;
      p.request->wait();
      start_reduce_scatter(p);
    }
    for (Pending& p : pending_) p.request->wait();
    pending_.clear();
    // The tied embedding: the first stage's piece (lookup) plus the last's (head), the same piece on both.
    if (Communicator* embedding = grid_.embedding()) {
      for (const ZeroUnit& u : units_) {
        if (u.tied) embedding->all_reduce(gradients_.data() + u.shard_offset, size_t(u.piece));
      }
    }
  });
}

double ZeroOptimizer::clip_gradients(double max_norm) {
  double norm = 0;
  timed(times_.optimizer, [&] {
    double local = 0;
    for (const ZeroUnit& u : units_) {
      for (const LocalTensor& t : owner_layout_.tensors()) {
        if (!t.owned) continue;
        const int64_t from = std::max(u.begin, t.offset), to = std::min(u.end, t.offset + t.size);
        for (int64_t i = from; i < to; ++i) {
          const double g = gradients_[size_t(u.shard_offset + i - u.begin)];
          local += g * g;
        }
      }
    }
    float sum = float(local);
    grid_.world().all_reduce(&sum, 1);
    norm = std::sqrt(double(sum));
    if (max_norm > 0 && norm > max_norm) {
      const float scale = float(max_norm / norm);
      for (float& g : gradients_) g *= scale;
    }
  });
  return norm;
}

void ZeroOptimizer::adamw(long step, double lr, double weight_decay) {
  cpu::AdamWSettings settings;
  settings.learning_rate = float(lr);
  timed(times_.optimizer, [&] {
    for (const ZeroUnit& u : units_) {
      // This rank's elements of each tensor of the unit, relative to the piece's start.
      std::vector<cpu::AdamWRange> ranges;
      for (const LocalTensor& t : layout_.tensors()) {
        const int64_t from = std::max(u.begin, t.offset), to = std::min(u.end, t.offset + t.size);
        if (from < to) ranges.push_back({from - u.begin, to - from, t.decayed ? float(weight_decay) : 0.0f});
      }
      if (ranges.empty()) continue;
      const size_t s = size_t(u.shard_offset);
      float* weights = offload_ ? master_.data() + s : parameters_ + u.begin;
      cpu::adamw_update_ranges(weights, gradients_.data() + s, m_.data() + s, v_.data() + s, ranges, settings, step,
                               threads_);
    }
  });
  if (offload_) {
    timed(times_.offload, [&] {
      for (const ZeroUnit& u : units_) std::copy_n(master_.data() + u.shard_offset, u.end - u.begin, parameters_ + u.begin);
    });
  }
  timed(times_.dp_comm, [&] { all_gather_weights(); });
}

// Unit by unit, so the receive buffer is one unit's.
void ZeroOptimizer::all_gather_weights() {
  const int D = grid_.data_and_context().size();
  DeviceFloats send({device_, DeviceUse::comm_buffers}), receive({device_, DeviceUse::comm_buffers});
  int64_t largest = 0;
  for (const ZeroUnit& u : units_) largest = std::max(largest, u.piece);
  send.assign(size_t(largest), 0.0f);
  receive.assign(size_t(largest * D), 0.0f);
  for (const ZeroUnit& u : units_) {
    std::fill_n(send.data(), u.piece, 0.0f);
    std::copy_n(parameters_ + u.begin, u.end - u.begin, send.data());
    grid_.data_and_context().all_gather(send.data(), receive.data(), size_t(u.piece));
    std::copy_n(receive.data(), u.size, parameters_ + u.offset);
  }
}

void ZeroOptimizer::load_master() {
  if (!offload_) return;
  for (const ZeroUnit& u : units_) std::copy_n(parameters_ + u.begin, u.end - u.begin, master_.data() + u.shard_offset);
}

void ZeroOptimizer::load_moments(const float* local_m, const float* local_v) {
  for (const ZeroUnit& u : units_) {
    std::copy_n(local_m + u.begin, u.end - u.begin, m_.data() + u.shard_offset);
    std::copy_n(local_v + u.begin, u.end - u.begin, v_.data() + u.shard_offset);
  }
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
