// oneDNN matmul with a primitive cache per distinct call (see onednn_matmul.h).
#include "executor/cpu/onednn_matmul.h"

#include <omp.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <stdexcept>
#include <tuple>

#include "executor/cpu/half.h"

namespace axo::cpu {
namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::data_type dnnl_type(MatmulType type) {
  return type == MatmulType::f32 ? memory::data_type::f32 : memory::data_type::bf16;
}

// The logical row-major [rows, cols] operand: stored as is with leading
// dimension ld (strides {ld, 1}), or stored transposed, [cols, rows] with
// leading dimension ld (strides {1, ld}).
memory::desc operand(MatmulType type, int64_t rows, int64_t cols, bool transposed, int64_t ld) {
  const memory::dims strides = transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
  return memory::desc({rows, cols}, dnnl_type(type), strides);
}

struct CachedMatmul {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
};

// alpha scales the product (output scales); beta·C is a sum post-op, added after.
CachedMatmul create(const MatmulCall& c) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // one per thread (below): concurrent calls are safe
  if (c.alpha != 1.0f) attr.set_output_scales(0, {c.alpha});
  if (c.beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(c.beta);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::desc desc(operand(c.ab_type, c.m, c.k, c.transpose_a, c.lda),
                                operand(c.ab_type, c.k, c.n, c.transpose_b, c.ldb),
                                operand(c.c_type, c.m, c.n, false, c.ldc));
  try {
    dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
    return {pd, dnnl::matmul(pd)};
  } catch (const dnnl::error& e) {
    throw std::runtime_error("oneDNN matmul " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                             std::to_string(c.k) + ": " + e.what());
  }
}

const CachedMatmul& cached(const MatmulCall& c) {
  using Key = std::tuple<MatmulType, MatmulType, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         uint32_t, uint32_t>;
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<const CachedMatmul>> cache;  // entries never move or go
  const Key key{c.ab_type, c.c_type, c.transpose_a, c.transpose_b, c.m, c.n, c.k, c.lda, c.ldb, c.ldc,
                std::bit_cast<uint32_t>(c.alpha), std::bit_cast<uint32_t>(c.beta)};
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<const CachedMatmul>& entry = cache[key];
  if (!entry) entry = std::make_unique<const CachedMatmul>(create(c));
  return *entry;
}

// This thread's scratchpad, grown to the largest a call needed; 64-byte aligned.
void* scratchpad(size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (bytes > buffer.size) {
    std::free(buffer.data);
    buffer.size = 0;
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffer.data = std::aligned_alloc(64, rounded);
    if (!buffer.data) throw std::bad_alloc();
    buffer.size = rounded;
  }
  return buffer.data;
}

std::atomic<int> onednn_threads{0};  // 0: OpenMP's default (OMP_NUM_THREADS or the cores)

// OpenMP's thread count is per calling thread: set it on each thread that calls.
void apply_threads() {
  const int threads = onednn_threads.load(std::memory_order_relaxed);
  if (threads > 0 && omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

// k = 0: the product is empty and C becomes beta·C (as BLAS defines it).
void scale_c(const MatmulCall& c) {
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      const int64_t at = i * c.ldc + j;
      if (c.c_type == MatmulType::f32) {
        float& v = static_cast<float*>(c.c)[at];
        v = c.beta == 0.0f ? 0.0f : c.beta * v;
      } else {
        Half& v = static_cast<Half*>(c.c)[at];
        v = to_bfloat16(c.beta == 0.0f ? 0.0f : c.beta * bfloat16_to_float(v));
      }
    }
  }
}

}  // namespace

void onednn_matmul(const MatmulCall& c) {
  if (c.m == 0 || c.n == 0) return;
  if (c.k == 0) return scale_c(c);
  apply_threads();
  const CachedMatmul& matmul = cached(c);
  dnnl::engine& engine = cpu_engine();
  thread_local dnnl::stream stream(cpu_engine());
  const memory a(matmul.pd.src_desc(), engine, const_cast<void*>(c.a));
  const memory b(matmul.pd.weights_desc(), engine, const_cast<void*>(c.b));
  const memory dst(matmul.pd.dst_desc(), engine, c.c);
  const memory::desc scratch_desc = matmul.pd.scratchpad_desc();
  const memory scratch(scratch_desc, engine, scratchpad(scratch_desc.get_size()));
  matmul.primitive.execute(
      stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratch}});
  stream.wait();
}

std::string onednn_matmul_implementation(const MatmulCall& call) { return cached(call).pd.impl_info_str(); }

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

void set_onednn_threads(int threads) {
  onednn_threads.store(threads, std::memory_order_relaxed);
  apply_threads();
}

}  // namespace axo::cpu
