// Activation checkpointing (ember/activation_checkpoint.h): the same gradients, bit for
// bit, as without it, for less memory.
#include <gtest/gtest.h>

#include <cstdio>

#include "ember/autograd.h"
#include "ember/activation_checkpoint.h"
#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::values;

// A deep MLP whose blocks draw random numbers, so a recompute is right only
// if it replays the generator.
struct Mlp {
  TensorList weights, biases;  // weights[k]: (width, width), biases[k]: (width)
};

Mlp make_mlp(int64_t blocks, int64_t width) {
  Generator gen(11);
  Mlp m;
  const double scale = 1.0 / std::sqrt(static_cast<double>(width));
  for (int64_t k = 0; k < blocks; ++k) {
    m.weights.push_back((randn({width, width}, {}, &gen) * scale).requires_grad_());
    m.biases.push_back((randn({width}, {}, &gen) * 0.1).requires_grad_());
  }
  return m;
}

// (batch, width) -> (batch, width): tanh(x W^T + b) * noise
Tensor block(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor h = linear(x, w, b).tanh();
  return h * rand_like(h);
}

// Runs forward and backward; returns the output.
Tensor train_step(const Mlp& m, const Tensor& x, bool checkpointed) {
  manual_seed(2024);
  Tensor h = x;
  for (size_t k = 0; k < m.weights.size(); ++k) {
    auto fn = [&m, k](const TensorList& in) { return TensorList{block(in[0], m.weights[k], m.biases[k])}; };
    h = checkpointed ? autograd::checkpoint(fn, {h})[0] : fn({h})[0];
  }
  h.sum().backward();
  return h.detach();
}

Tensor input(int64_t batch, int64_t width) {
  Generator gen(5);
  return randn({batch, width}, {}, &gen).requires_grad_();
}

TEST(Checkpoint, GradientsAreBitwiseThoseOfThePlainRun) {
  const int64_t blocks = 16, width = 256, batch = 32;
  Mlp plain = make_mlp(blocks, width), ckpt = make_mlp(blocks, width);
  Tensor x_plain = input(batch, width), x_ckpt = input(batch, width);
  Tensor out_plain = train_step(plain, x_plain, false);
  Tensor out_ckpt = train_step(ckpt, x_ckpt, true);
  EXPECT_EQ(values(out_ckpt), values(out_plain));
  EXPECT_EQ(values(x_ckpt.grad()), values(x_plain.grad()));
  for (int64_t k = 0; k < blocks; ++k) {
    EXPECT_EQ(values(ckpt.weights[k].grad()), values(plain.weights[k].grad())) << "block " << k;
    EXPECT_EQ(values(ckpt.biases[k].grad()), values(plain.biases[k].grad())) << "block " << k;
  }
}

TEST(Checkpoint, BackwardLeavesTheGeneratorWhereItWas) {
  Tensor x = tensor({0.5, -0.5}).requires_grad_();
  auto noisy = [](const TensorList& in) { return TensorList{in[0] * rand_like(in[0])}; };
  manual_seed(3);
  Tensor y = autograd::checkpoint(noisy, {x})[0];
  const uint64_t seed = default_generator().seed(), offset = default_generator().offset();
  const Tensor noise = y.detach() / x.detach();
  y.backward(ones_like(y));
  EXPECT_EQ(default_generator().seed(), seed);
  EXPECT_EQ(default_generator().offset(), offset);
  EXPECT_EQ(values(x.grad()), values(noise));  // the recompute drew the same noise
}

TEST(Checkpoint, LowersThePeakMemoryOfATrainingStep) {
  const int64_t blocks = 16, width = 256, batch = 512;
  auto peak_bytes = [&](bool checkpointed) {
    Mlp m = make_mlp(blocks, width);
    Tensor x = input(batch, width);
    const int64_t before = memory_stats().allocated_bytes;
    reset_peak_memory_stats();
    train_step(m, x, checkpointed);
    return memory_stats().peak_allocated_bytes - before;
  };
  const int64_t plain = peak_bytes(false), ckpt = peak_bytes(true);
  std::printf("peak memory of forward+backward, %ld blocks of (%ld, %ld): %.1f MiB plain, %.1f MiB checkpointed\n",
              blocks, batch, width, plain / 1048576.0, ckpt / 1048576.0);
  EXPECT_LT(ckpt, plain * 7 / 10);
}

TEST(Checkpoint, ParametersGetGradientsWhenNoInputRequiresGrad) {
  // Nothing to checkpoint on: the block runs and records as usual.
  Tensor w = tensor({2.0, 3.0}).requires_grad_();
  Tensor x = tensor({1.0, 4.0});
  Tensor y = autograd::checkpoint([&](const TensorList& in) { return TensorList{in[0] * w}; }, {x})[0];
  y.backward(ones_like(y));
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1.0, 4.0}));
}

TEST(Checkpoint, InputModifiedInPlaceBeforeBackwardIsAnError) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = a * 2.0;
  Tensor y = autograd::checkpoint([](const TensorList& in) { return TensorList{in[0].exp()}; }, {h})[0];
  {
    NoGradGuard no_grad;
    h.add_(1.0);
  }
  EXPECT_EMBER_ERROR(y.backward(ones_like(y)), "CheckpointBackward", "modified by an in-place operation");
}

TEST(Checkpoint, CreateGraphThroughACheckpointIsRefused) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = autograd::checkpoint([](const TensorList& in) { return TensorList{in[0] * in[0]}; }, {x})[0];
  EXPECT_EMBER_ERROR(autograd::grad({y}, {x}, {ones_like(y)}, std::nullopt, /*create_graph=*/true),
                     "CheckpointBackward", "create_graph");
}

TEST(Checkpoint, ReturningAnInputKeepsItsHistory) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = a * 3.0;
  TensorList out = autograd::checkpoint([](const TensorList& in) { return TensorList{in[0], in[0] * 2.0}; }, {h});
  EXPECT_EQ(h.grad_fn()->name(), "MulBackward");
  EXPECT_EQ(out[0].grad_fn()->name(), "CheckpointBackward");
  autograd::backward(out, {ones_like(h), ones_like(h)});
  EXPECT_EQ(values(a.grad()), (std::vector<double>{9.0, 9.0}));  // 3 * (1 + 2)
}

}  // namespace
}  // namespace ember
