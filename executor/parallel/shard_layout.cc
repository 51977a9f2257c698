// The local parameter layout of a rank of the 4D grid (see shard_layout.h).
#include "executor/parallel/shard_layout.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "executor/parallel/vocab_parallel_head.h"
#include "model/error.h"

namespace axo {

namespace {

// Start of each tensor in llm.c's full layout.
std::array<int64_t, kGptTensors> full_offsets(const GptShape& g) {
  const auto sizes = gpt_tensor_sizes(g);
  std::array<int64_t, kGptTensors> offsets{};
  int64_t offset = 0;
  for (int i = 0; i < kGptTensors; ++i) offsets[size_t(i)] = offset, offset += sizes[size_t(i)];
  return offsets;
}

// Segments of chunk [begin, end) of a rows×cols block, flattened row-major,
// whose row r is full row global_row(r) (of length K) from column col0.
std::vector<ShardSegment> block_segments(int64_t base, int64_t K, int64_t cols, int64_t col0,
                                         const std::function<int64_t(int64_t)>& global_row, int64_t begin,
                                         int64_t end) {
  std::vector<ShardSegment> segments;
  for (int64_t e = begin; e < end;) {
    const int64_t r = e / cols, c = e % cols;
    const int64_t length = std::min(end, (r + 1) * cols) - e;
    segments.push_back({e - begin, base + global_row(r) * K + col0 + c, length});
    e += length;
  }
  return segments;
}

// InputError naming what of the model the grid does not divide.
void check_grid(const GptShape& g, const ParallelConfig& config) {
  if (g.heads % config.y != 0) {
    throw InputError("y = " + std::to_string(config.y) + " does not divide the model's " + std::to_string(g.heads) +
                     " heads (attention is split by heads over Y)");
  }
  // Each Z rank's rows split over Y; a channel split over X has no row layout (model/cost_model.cc check_schedule).
  if (config.sequence_parallel && config.x != 1) {
    throw InputError("sequence parallelism splits the rows over Y with the channels whole: it needs x = 1 (got x = " +
                     std::to_string(config.x) + ")");
  }
  if (g.channels % config.x != 0) {
    throw InputError("x = " + std::to_string(config.x) + " does not divide the model's " +
                     std::to_string(g.channels) + " channels");
  }
}

// The layers of `chunks`, in order.
std::vector<int64_t> layer_indices(const std::vector<LayerRange>& chunks) {
  std::vector<int64_t> layers;
  for (const LayerRange& chunk : chunks) {
    for (int64_t l = chunk.begin; l < chunk.end; ++l) layers.push_back(l);
  }
  return layers;
}

}  // namespace

ShardLayout::ShardLayout(const GptShape& g, const ParallelConfig& config, const GridCoords& at,
                         const PipelineSplit& split)
    : shape_(g) {
  if (split.stages() != config.pipeline || split.interleave() != config.interleave) {
    throw std::logic_error("ShardLayout: the split's stages and chunks are not the plan's");
  }
  for (int64_t c = 0; c < split.interleave(); ++c) chunks_.push_back(split.chunk(at.pipeline, c));
  check_grid(g, config);
  const int64_t C = g.channels, Gx = config.x, Gy = config.y, Gz = config.z;
  const int64_t Cx = C / Gx, Cy = C / Gy, L = g.layers;
  const bool first = at.pipeline == 0, last = at.pipeline == config.pipeline - 1;
  // One copy of each element is owned: on data and context rank 0 (context ranks hold the same shards).
  const bool data_owner = at.data == 0 && at.context == 0;
  const bool replica_owner = data_owner && at.z == 0 && at.y == 0;
  // Parameters applied to the residual stream's rows (norms, embeddings).
  const GradientGroup row_group = config.sequence_parallel ? GradientGroup::y_z_and_data : GradientGroup::z_and_data;
  const auto base = full_offsets(g);
  auto of = [&](GptTensor t) { return base[size_t(t)]; };

  // Every row's X slice of a [rows, C] matrix.
  auto x_columns = [&](int64_t start, int64_t rows) {
    std::vector<ShardSegment> segments;
    for (int64_t r = 0; r < rows; ++r) segments.push_back({r * Cx, start + r * C + at.x * Cx, Cx});
    return segments;
  };
  auto slice = [&](int64_t start, int64_t length) { return std::vector<ShardSegment>{{0, start, length}}; };
  // A linear weight's Z chunk of its (x, y) block.
  auto linear = [&](GptTensor kind, int64_t l, int64_t rows, int64_t cols, int64_t K, int64_t col0,
                    const std::function<int64_t(int64_t)>& global_row) {
    const int64_t total = rows * cols, chunk = (total + Gz - 1) / Gz;
    const int64_t begin = std::min(total, at.z * chunk), end = std::min(total, begin + chunk);
    const int64_t per_layer = gpt_tensor_sizes(g)[size_t(kind)] / L;
    add(kind, l, chunk, true, data_owner, false, GradientGroup::data,
        block_segments(of(kind) + l * per_layer, K, cols, col0, global_row, begin, end));
  };

  // The token embedding: this Y rank's vocabulary rows (vocab_parallel_head.h), those of llm.c's
  // Vp rows among them; unique per (x, y), summed over z and data (each rank adds its own rows' gradients).
  const VocabSlice vocab = executor_vocab_slice(g, config, at.y);
  auto vocab_rows = [&] {
    const int64_t stored = std::max<int64_t>(0, std::min(vocab.end, g.padded_vocab) - vocab.begin);
    return x_columns(of(GptTensor::wte) + vocab.begin * C, stored);
  };
  const bool embedding_owner = data_owner && at.z == 0;
  if (first) {
    add(GptTensor::wte, -1, vocab.rows() * Cx, true, embedding_owner, config.pipeline > 1, GradientGroup::z_and_data,
        vocab_rows());
    add(GptTensor::wpe, -1, g.max_seq * Cx, true, replica_owner, false, row_group,
        x_columns(of(GptTensor::wpe), g.max_seq));
  }
  for (int64_t l : layer_indices(chunks_)) {
    // Plain layers: rows (outputs) over Y, columns (inputs) over X.
    linear(GptTensor::qkvw, l, 3 * Cy, Cx, C, at.x * Cx, [&](int64_t r) { return r / Cy * C + at.y * Cy + r % Cy; });
    // Transposed layers: rows over X, columns over Y.
    linear(GptTensor::attprojw, l, Cx, Cy, C, at.y * Cy, [&](int64_t r) { return at.x * Cx + r; });
    linear(GptTensor::fcw, l, 4 * Cy, Cx, C, at.x * Cx, [&](int64_t r) { return at.y * 4 * Cy + r; });
    linear(GptTensor::fcprojw, l, Cx, 4 * Cy, 4 * C, at.y * 4 * Cy, [&](int64_t r) { return at.x * Cx + r; });
    // Slices over X are replicated over Y and the other way round; one copy is owned.
    auto small = [&](GptTensor kind, std::vector<ShardSegment> segments) {
      int64_t size = 0;
      for (const ShardSegment& s : segments) size += s.length;
      const bool split_over_y = kind == GptTensor::qkvb || kind == GptTensor::fcb;
      const bool owned = data_owner && at.z == 0 && (split_over_y ? at.x == 0 : at.y == 0);
      const bool norm = kind == GptTensor::ln1w || kind == GptTensor::ln1b || kind == GptTensor::ln2w || kind == GptTensor::ln2b;
      add(kind, l, size, false, owned, false, norm ? row_group : GradientGroup::z_and_data, std::move(segments));
    };
    small(GptTensor::ln1w, slice(of(GptTensor::ln1w) + l * C + at.x * Cx, Cx));
    small(GptTensor::ln1b, slice(of(GptTensor::ln1b) + l * C + at.x * Cx, Cx));
    std::vector<ShardSegment> qkvb;
    for (int64_t part = 0; part < 3; ++part) {
      qkvb.push_back({part * Cy, of(GptTensor::qkvb) + l * 3 * C + part * C + at.y * Cy, Cy});
    }
    small(GptTensor::qkvb, qkvb);
    small(GptTensor::attprojb, slice(of(GptTensor::attprojb) + l * C + at.x * Cx, Cx));
    small(GptTensor::ln2w, slice(of(GptTensor::ln2w) + l * C + at.x * Cx, Cx));
    small(GptTensor::ln2b, slice(of(GptTensor::ln2b) + l * C + at.x * Cx, Cx));
    small(GptTensor::fcb, slice(of(GptTensor::fcb) + l * 4 * C + at.y * 4 * Cy, 4 * Cy));
    small(GptTensor::fcprojb, slice(of(GptTensor::fcprojb) + l * C + at.x * Cx, Cx));
  }
  if (last) {
    add(GptTensor::lnfw, -1, Cx, false, replica_owner, false, row_group, slice(of(GptTensor::lnfw) + at.x * Cx, Cx));
    add(GptTensor::lnfb, -1, Cx, false, replica_owner, false, row_group, slice(of(GptTensor::lnfb) + at.x * Cx, Cx));
    // The LM head's copy of the tied embedding (the first stage's is the one counted).
    if (!first) add(GptTensor::wte, -1, vocab.rows() * Cx, true, false, true, GradientGroup::z_and_data, vocab_rows());
  }
  make_buckets(first);
}

void ShardLayout::make_buckets(bool first) {
  for (const LocalTensor& t : tensors_) {
    const bool head = t.kind == GptTensor::lnfw || t.kind == GptTensor::lnfb || (t.kind == GptTensor::wte && !first);
    const int64_t layer = t.layer >= 0 ? t.layer : head ? shape_.layers : -1;
    if (!buckets_.empty() && buckets_.back().layer == layer && buckets_.back().group == t.group) {
      buckets_.back().size += t.size;
    } else {
      buckets_.push_back({t.offset, t.size, t.group, layer});
    }
  }
}

void ShardLayout::add(GptTensor kind, int64_t layer, int64_t size, bool decayed, bool owned, bool tied,
                      GradientGroup group, std::vector<ShardSegment> segments) {
  LocalTensor t;
  t.kind = kind, t.layer = layer, t.offset = size_, t.size = size, t.decayed = decayed, t.owned = owned;
  t.tied = tied, t.group = group, t.segments = std::move(segments);
  for (ShardSegment& s : t.segments) s.local += size_;
  size_ += size;
  tensors_.push_back(std::move(t));
}

const LocalTensor* ShardLayout::find(GptTensor kind, int64_t layer) const {
  for (const LocalTensor& t : tensors_) {
    if (t.kind == kind && t.layer == layer) return &t;
  }
  return nullptr;
}

float* ShardLayout::view(float* base, GptTensor kind, int64_t layer) const {
  const LocalTensor* t = find(kind, layer);
  if (!t) throw std::logic_error("ShardLayout: this rank holds no such tensor");
  return base + t->offset;
}

const float* ShardLayout::view(const float* base, GptTensor kind, int64_t layer) const {
  return view(const_cast<float*>(base), kind, layer);
}

void ShardLayout::scatter(const float* full, float* local) const {
  for (const LocalTensor& t : tensors_) {
    for (const ShardSegment& s : t.segments) std::copy_n(full + s.global, s.length, local + s.local);
  }
}

void ShardLayout::add_owned(const float* local, float* full) const {
  for (const LocalTensor& t : tensors_) {
    if (!t.owned) continue;
    for (const ShardSegment& s : t.segments) {
      for (int64_t i = 0; i < s.length; ++i) full[s.global + i] += local[s.local + i];
    }
  }
}

}  // namespace axo
