// Every CUDA op against the CPU backend (ggml's test-backend-ops is the
// model): the same random inputs through both, outputs and accumulated
// gradients compared at fp32 round-off (sums within a row run in another
// order on the GPU, and LayerNorm's there in fp32 where the CPU's are in
// double), and exactly where both add in the same order (embedding
// gradients, AdamW). Skips, and says so, where no GPU is visible (CI has none).
// axo-test-needs: cuda
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "executor/cpu/adamw.h"
#include "executor/cpu/ops.h"
#include "executor/cuda/device.h"
#include "executor/cuda/ops.h"
#include "tests/executor/random_values.h"

namespace axo {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU visible: CUDA op tests skipped"

// A device copy of a host vector, read back with host().
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& values) : size_(values.size()) {
    cuda::check(cudaMalloc(&data_, std::max<size_t>(1, size_) * sizeof(T)), "cudaMalloc");
    cuda::check(cudaMemcpy(data_, values.data(), size_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() { return data_; }
  std::vector<T> host() const {
    std::vector<T> values(size_);
    cuda::check(cudaMemcpy(values.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return values;
  }

 private:
  T* data_ = nullptr;
  size_t size_;
};

using testing::random_values;

std::vector<int> random_tokens(size_t n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> token(0, vocab - 1);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = token(rng);
  return tokens;
}

// |gpu − cpu| ≤ tolerance · max(1, max |cpu|) for every element.
void expect_close(const std::vector<float>& gpu, const std::vector<float>& cpu, float tolerance, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  float scale = 1.0f;
  for (float v : cpu) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < cpu.size(); ++i) ASSERT_NEAR(gpu[i], cpu[i], tolerance * scale) << what << "[" << i << "]";
}

constexpr float kTolerance = 1e-5f;

TEST(CudaOps, EmbeddingForwardAndBackward) {
  SKIP_WITHOUT_GPU();
  const int64_t rows = 48, first_row = 5, T = 16, C = 40, V = 30;
  const std::vector<int> tokens = random_tokens(size_t(rows), int(V), 1);  // tokens repeat: atomics add
  const std::vector<float> wte = random_values(size_t(V * C), 2), wpe = random_values(size_t(T * C), 3);
  std::vector<float> out(size_t(rows * C));
  cpu::embedding_forward_rows(out.data(), tokens.data(), wte.data(), wpe.data(), rows, first_row, T, C);
  DeviceBuffer<int> d_tokens(tokens);
  DeviceBuffer<float> d_wte(wte), d_wpe(wpe), d_out(std::vector<float>(out.size()));
  cuda::embedding_forward_rows(d_out.get(), d_tokens.get(), d_wte.get(), d_wpe.get(), rows, first_row, T, C);
  expect_close(d_out.host(), out, kTolerance, "out");

  const std::vector<float> dout = random_values(out.size(), 4);
  std::vector<float> dwte = random_values(wte.size(), 5), dwpe = random_values(wpe.size(), 6);
  DeviceBuffer<float> d_dout(dout), d_dwte(dwte), d_dwpe(dwpe);
  cpu::embedding_backward_rows(dwte.data(), dwpe.data(), dout.data(), tokens.data(), rows, first_row, T, C);
  cuda::embedding_backward_rows(d_dwte.get(), d_dwpe.get(), d_dout.get(), d_tokens.get(), rows, first_row, T, C);
  EXPECT_EQ(d_dwte.host(), dwte);  // rows added in order, as on the CPU
  EXPECT_EQ(d_dwpe.host(), dwpe);
}

TEST(CudaOps, LayerNormForwardAndBackward) {
  SKIP_WITHOUT_GPU();
  const int64_t N = 37, C = 300;  // C above the block size: each thread takes several channels
  const std::vector<float> in = random_values(size_t(N * C), 1, 3.0f), weight = random_values(size_t(C), 2);
  const std::vector<float> bias = random_values(size_t(C), 3);
  std::vector<float> out(in.size()), mean(static_cast<size_t>(N)), rstd(static_cast<size_t>(N));
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), in.data(), weight.data(), bias.data(), N, C);
  DeviceBuffer<float> d_in(in), d_weight(weight), d_bias(bias), d_out(std::vector<float>(out.size()));
  DeviceBuffer<float> d_mean(std::vector<float>(mean.size())), d_rstd(std::vector<float>(rstd.size()));
  cuda::layernorm_forward(d_out.get(), d_mean.get(), d_rstd.get(), d_in.get(), d_weight.get(), d_bias.get(), N, C);
  expect_close(d_out.host(), out, 1e-4f, "out");
  expect_close(d_mean.host(), mean, 1e-5f, "mean");
  expect_close(d_rstd.host(), rstd, 1e-5f, "rstd");

  const std::vector<float> dout = random_values(in.size(), 4);
  std::vector<float> din = random_values(in.size(), 5), dweight = random_values(size_t(C), 6);
  std::vector<float> dbias = random_values(size_t(C), 7);
  DeviceBuffer<float> d_dout(dout), d_din(din), d_dweight(dweight), d_dbias(dbias);
  cpu::layernorm_backward(din.data(), dweight.data(), dbias.data(), dout.data(), in.data(), weight.data(), mean.data(),
                          rstd.data(), N, C);
  cuda::layernorm_backward(d_din.get(), d_dweight.get(), d_dbias.get(), d_dout.get(), d_in.get(), d_weight.get(),
                           d_mean.get(), d_rstd.get(), N, C);
  expect_close(d_din.host(), din, 1e-4f, "din");
  expect_close(d_dweight.host(), dweight, 1e-4f, "dweight");
  expect_close(d_dbias.host(), dbias, 1e-5f, "dbias");
}

void check_attention(int64_t B, int64_t T, int64_t C, int64_t NH) {
  const std::vector<float> qkv = random_values(size_t(B * T * 3 * C), 1);
  std::vector<float> out(size_t(B * T * C)), att(size_t(B * NH * T * T));
  cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  DeviceBuffer<float> d_qkv(qkv), d_out(std::vector<float>(out.size())), d_att(std::vector<float>(att.size()));
  cuda::attention_forward(d_out.get(), d_att.get(), d_qkv.get(), B, T, C, NH);
  expect_close(d_out.host(), out, kTolerance, "out");
  expect_close(d_att.host(), att, kTolerance, "att");  // the masked half exactly 0 on both

  const std::vector<float> dout = random_values(out.size(), 2);
  std::vector<float> dqkv = random_values(qkv.size(), 3), scratch(att.size());
  DeviceBuffer<float> d_dout(dout), d_dqkv(dqkv), d_scratch(scratch);
  cpu::attention_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
  cuda::attention_backward(d_dqkv.get(), d_scratch.get(), d_dout.get(), d_qkv.get(), d_att.get(), B, T, C, NH);
  expect_close(d_dqkv.host(), dqkv, 1e-4f, "dqkv");
}

TEST(CudaOps, AttentionForwardAndBackward) {
  SKIP_WITHOUT_GPU();
  check_attention(2, 19, 24, 3);
  check_attention(1, 300, 16, 2);  // more positions than a block's threads: each thread takes several
}

TEST(CudaOps, ElementWiseOps) {
  SKIP_WITHOUT_GPU();
  const int64_t N = 1000;
  const std::vector<float> x = random_values(size_t(N), 1, 2.0f), y = random_values(size_t(N), 2);
  const std::vector<float> dout = random_values(size_t(N), 3);
  std::vector<float> out(static_cast<size_t>(N)), din = random_values(size_t(N), 4), dy = random_values(size_t(N), 5);
  DeviceBuffer<float> d_x(x), d_y(y), d_dout(dout), d_out(out), d_din(din), d_dy(dy);

  cpu::gelu_forward(out.data(), x.data(), N);
  cuda::gelu_forward(d_out.get(), d_x.get(), N);
  expect_close(d_out.host(), out, kTolerance, "gelu");
  cpu::gelu_backward(din.data(), dout.data(), x.data(), N);
  cuda::gelu_backward(d_din.get(), d_dout.get(), d_x.get(), N);
  expect_close(d_din.host(), din, kTolerance, "gelu backward");

  cpu::residual_forward(out.data(), x.data(), y.data(), N);
  cuda::residual_forward(d_out.get(), d_x.get(), d_y.get(), N);
  expect_close(d_out.host(), out, kTolerance, "residual");
  cpu::residual_backward(din.data(), dy.data(), dout.data(), N);
  cuda::residual_backward(d_din.get(), d_dy.get(), d_dout.get(), N);
  expect_close(d_din.host(), din, kTolerance, "residual backward, a");
  expect_close(d_dy.host(), dy, kTolerance, "residual backward, b");
}

TEST(CudaOps, CrossEntropyForwardAndBackward) {
  SKIP_WITHOUT_GPU();
  const int64_t BT = 21, V = 300, Vp = 384;  // padded columns get probability 0 and no gradient
  const std::vector<float> logits = random_values(size_t(BT * Vp), 1, 4.0f);
  const std::vector<int> targets = random_tokens(size_t(BT), int(V), 2);
  std::vector<float> probs(logits.size());
  const float loss = cpu::cross_entropy_forward(probs.data(), logits.data(), targets.data(), BT, V, Vp);
  DeviceBuffer<float> d_logits(logits), d_probs(std::vector<float>(probs.size(), 7.0f));
  DeviceBuffer<int> d_targets(targets);
  const float gpu_loss = cuda::cross_entropy_forward(d_probs.get(), d_logits.get(), d_targets.get(), BT, V, Vp);
  EXPECT_NEAR(gpu_loss, loss, 1e-5f * std::max(1.0f, loss));
  expect_close(d_probs.host(), probs, kTolerance, "probs");

  std::vector<float> dlogits = random_values(logits.size(), 3);
  DeviceBuffer<float> d_dlogits(dlogits);
  cpu::cross_entropy_backward(dlogits.data(), probs.data(), targets.data(), BT, V, Vp);
  cuda::cross_entropy_backward(d_dlogits.get(), d_probs.get(), d_targets.get(), BT, V, Vp);
  expect_close(d_dlogits.host(), dlogits, kTolerance, "dlogits");
}

TEST(CudaOps, AdamW) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 5003;
  std::vector<float> params = random_values(size_t(n), 1), m(size_t(n), 0.0f), v(size_t(n), 0.0f);
  DeviceBuffer<float> d_params(params), d_m(m), d_v(v);
  const cpu::AdamWSettings settings{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (long step = 1; step <= 3; ++step) {
    const std::vector<float> grads = random_values(size_t(n), uint32_t(10 + step));
    DeviceBuffer<float> d_grads(grads);
    cpu::adamw_update_reference(params.data(), grads.data(), m.data(), v.data(), size_t(n), settings, step);
    cuda::adamw_update(d_params.get(), d_grads.get(), d_m.get(), d_v.get(), n, settings, step);
  }
  // The same operations in the same order, without fused multiply-adds on either side.
  EXPECT_EQ(d_params.host(), params);
  EXPECT_EQ(d_m.host(), m);
  EXPECT_EQ(d_v.host(), v);
}

TEST(CudaOps, ZeroSizesDoNothing) {
  SKIP_WITHOUT_GPU();
  DeviceBuffer<float> one(std::vector<float>{2.5f});
  DeviceBuffer<int> token(std::vector<int>{0});
  float* p = one.get();
  cuda::embedding_forward_rows(p, token.get(), p, p, 0, 0, 1, 1);
  cuda::embedding_backward_rows(p, p, p, token.get(), 0, 0, 1, 1);
  cuda::layernorm_forward(p, p, p, p, p, p, 0, 1);
  cuda::layernorm_backward(p, p, p, p, p, p, p, p, 0, 1);
  cuda::attention_forward(p, p, p, 0, 1, 1, 1);
  cuda::attention_backward(p, p, p, p, p, 0, 1, 1, 1);
  cuda::gelu_forward(p, p, 0);
  cuda::gelu_backward(p, p, p, 0);
  cuda::residual_forward(p, p, p, 0);
  cuda::residual_backward(p, p, p, 0);
  cuda::cross_entropy_backward(p, p, token.get(), 0, 1, 1);
  cuda::adamw_update(p, p, p, p, 0, cpu::AdamWSettings{}, 1);
  EXPECT_TRUE(std::isnan(cuda::cross_entropy_forward(p, p, token.get(), 0, 1, 1)));
  EXPECT_EQ(one.host(), std::vector<float>{2.5f});
}

}  // namespace
}  // namespace axo
