// AxoNN's 4D tensor-parallel linear layer on one rank (ARCHITECTURE.md):
// Y[m, n] = X[m, k] · Wᵀ + b with W's k axis split over the `in` group, its
// n axis over the `out` group, and each rank's (n/Gout)×(k/Gin) block split
// again over Z in contiguous chunks of the row-major block.
//
//   forward:  all-gather the block over Z; Y_partial = X_local · blockᵀ;
//             all-reduce Y_partial over `in`; add the bias slice.
//   backward: all-gather the block over Z (again: the Z-sharded memory is the
//             point); dX_partial = dY · block, all-reduced over `out`, under
//             dW = dYᵀ · X_local (OAR); dW reduce-scattered over Z into the
//             chunk, asynchronously (ORS) under the next layer's backward.
// prefetch() starts the next layer's all-gather early (OAG).
// A plain layer has in = X, out = Y; a transposed one in = Y, out = X.
//
// Megatron's sequence parallelism (x = 1; with z > 1, of the rows of this Z
// rank's sequences, which its whole Y group shares): the all-reduces become
// reduce-scatters of rows. A transposed layer reduce-scatters its output to
// [m/Gy, n] rows and, in backward, all-gathers dY's rows first; a plain
// layer reduce-scatters dX to [m/Gy, k] rows (its caller all-gathers X's rows
// before forward, and keeps them for backward).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "executor/comm/communicator.h"
#include "executor/memory/device_memory.h"
#include "executor/parallel/phase_times.h"
#include "executor/parallel/shard_view.h"
#include "model/overlap.h"
#include "model/transformer_spec.h"

namespace axo {

class Linear4d;

// Buffers of one kind handed out and given back: the smallest free one that holds a size, else the
// largest grown to exactly that size, else a new one. Once its buffers have grown to the sizes in
// flight at once, no more allocations.
template <class T>
class BufferPool {
 public:
  using Buffer = std::vector<T, DeviceAllocator<T>>;
  explicit BufferPool(const DeviceAllocator<T>& allocator) : allocator_(allocator) {}
  // `size` elements, contents undefined.
  Buffer take(size_t size) {
    auto preferred = [size](const Buffer& a, const Buffer& b) {
      const bool a_holds = a.capacity() >= size, b_holds = b.capacity() >= size;
      if (a_holds != b_holds) return a_holds;
      return a_holds ? a.capacity() < b.capacity() : a.capacity() > b.capacity();
    };
    Buffer buffer(allocator_);
    const auto chosen = std::min_element(free_.begin(), free_.end(), preferred);
    if (chosen != free_.end()) buffer = std::move(*chosen), free_.erase(chosen);
    resize_exactly(buffer, size);
    return buffer;
  }
  void give_back(Buffer buffer) { free_.push_back(std::move(buffer)); }

 private:
  DeviceAllocator<T> allocator_;
  std::vector<Buffer> free_;
};

// Buffers the layers of a stage share: one layer runs at a time, and each
// forward or backward is done with `rows` and `partial` when it returns.
// Weight blocks and their Z chunks come from pools: a layer takes a whole
// block when its all-gather starts (fp32, or 2-byte values as they are
// stored) and gives it back once its GEMM has read it, and an fp32 one for
// its dW (with a chunk to receive into) until the reduce-scatter over Z is
// done. With ORS one layer's reduce-scatter runs under the next layer's
// backward, which finishes it before starting its own, so the stage holds as
// many blocks as are in flight at once (the prefetched next one beside the
// current one; the dW being computed beside the one reducing), whatever its
// layers and microbatches: the Z sharding's saving.
class Linear4dScratch {
 public:
  explicit Linear4dScratch(DeviceMemory& memory)
      : rows({memory, DeviceUse::comm_buffers}),
        partial(rows.get_allocator()),
        blocks(rows.get_allocator()),
        half_blocks(DeviceAllocator<cpu::Half>(rows.get_allocator())),
        chunks(rows.get_allocator()),
        allocator_(rows.get_allocator()) {}
  DeviceFloats rows;     // forward: Y_partial before its reduce-scatter; backward: dY's gathered rows
  DeviceFloats partial;  // backward: dX before its reduction (then the reduce-scatter's rows)
  BufferPool<float> blocks;            // whole fp32 blocks: gathered weights, dW
  BufferPool<cpu::Half> half_blocks;   // whole 2-byte blocks: gathered bf16 or fp16 weights
  BufferPool<float> chunks;            // their z-th chunks: the dW reduce-scatter's receive

  // The layer whose dW reduce-scatter is in flight (ORS), finished before another starts.
  void reducing(Linear4d* layer) { reducing_ = layer; }
  void finished(const Linear4d* layer) { reducing_ = reducing_ == layer ? nullptr : reducing_; }
  void finish_reducing();
  // Books a layer's own buffers alongside, as communication buffers.
  const DeviceAllocator<float>& allocator() const { return allocator_; }

 private:
  DeviceAllocator<float> allocator_;
  Linear4d* reducing_ = nullptr;
};

class Linear4d {
 public:
  // The block is n_local × k_local; `times` receives compute and wait seconds.
  // Its buffers come from `scratch`, shared with the stage's other layers
  // (its own buffer, the reduce-scatter's dW chunk, is booked through it too).
  // Its GEMMs run at `precision` (cpu/gemm_precision.h: 2-byte operands, fp32 accumulation in bf16 and fp16).
  Linear4d(Communicator& in, Communicator& out, Communicator& z, int64_t n_local, int64_t k_local,
           const Overlap& overlap, bool sequence_parallel, PhaseTimes& times, Linear4dScratch& scratch,
           Precision precision = Precision::fp32);

  // Elements of this rank's chunk (the block split over Z, padded).
  int64_t chunk_size() const { return chunk_; }

  // Starts gathering the block from `chunk` (with OAG; no-op without Z split).
  void prefetch(ShardView chunk);
  // out[m, n_local] = all-reduce_in(in[m, k_local] · blockᵀ) + bias[n_local] (bias may be null).
  // With sequence parallelism out is this rank's m/|in| rows.
  // Weights, bias and their gradients may be bf16 or fp16 (shard_view.h); a Z-split block is gathered as stored.
  void forward(float* out, const float* in, ShardView chunk, ShardView bias, int64_t m);
  // din[m, k_local] += all-reduce_out(dout · block); dchunk += reduce-scatter_Z(doutᵀ · in);
  // dbias += Σ rows of dout. dout is replicated over `in`, so dbias needs no reduction there.
  // With sequence parallelism dout (transposed) or din (plain) hold this rank's rows only.
  void backward(float* din, ShardGrad dchunk, ShardGrad dbias, const float* dout, const float* in, ShardView chunk,
                int64_t m);
  // Completes the reduce-scatter of the last backward into its dchunk (with ORS the next layer's
  // backward does, before it starts its own; the stage, for each layer, after its last microbatch, or
  // after every microbatch under ZeRO 2).
  void finish_gradient();

 private:
  // Takes a block from the pool of the chunk's storage and gathers into it: started (OAG) or blocking.
  void gather(ShardView chunk, bool started);
  // The gathered block (the chunk itself without a Z split), held until release_block().
  ShardView block(ShardView chunk);
  void release_block();
  Communicator &in_, &out_, &z_;
  int64_t n_, k_, chunk_;
  Overlap overlap_;
  bool sequence_parallel_;
  Precision precision_;
  PhaseTimes& times_;
  DeviceFloats gathered_, dblock_, dchunk_part_;
  DeviceHalves gathered_half_;  // the gathered block of a 2-byte chunk
  DeviceFloats small_;  // n_local: a 2-byte bias widened, or a 2-byte dbias's fp32 column sums
  Linear4dScratch& scratch_;
  RequestPtr gather_, scatter_;
  ShardGrad scatter_target_;
};

}  // namespace axo
