// The normalisation layers and Embedding (ember/nn/modules/norm.h, embedding.h):
// PyTorch's state names, running statistics step by step, eval behaviour,
// forward equal to the F:: call, printing, errors that name the layer.
//   NnBatchNorm.*  BatchNorm1d, BatchNorm2d
//   NnNorm.*       LayerNorm, GroupNorm, RMSNorm
//   NnEmbedding.*  Embedding
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ember/autograd.h"
#include "ember/nn/functional.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/norm.h"
#include "tests/module_grad_check.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;

Tensor seeded(IntArrayRef sizes, uint64_t seed, double scale = 1.0, double shift = 0.0) {
  Generator g(seed);
  return randn(sizes, kFloat32, &g) * scale + shift;
}

std::vector<std::string> keys(const TensorDict& d) {
  std::vector<std::string> out;
  for (const auto& [k, v] : d) out.push_back(k);
  return out;
}

std::string printed(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

void expect_finite_grads(const nn::Module& m) {
  for (const auto& [name, p] : m.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_FALSE(p.grad().isnan().any().item<bool>() || p.grad().isinf().any().item<bool>()) << name;
  }
}

// Sets each parameter to a distinct value, so a wrong weight or bias shows.
void perturb(nn::Module& m, uint64_t seed) {
  NoGradGuard no_grad;
  for (auto& [name, p] : m.named_parameters()) p.add_(seeded(p.sizes(), seed++, 0.3));
}

// ---- BatchNorm ----

TEST(NnBatchNorm, StateIsNamedAsPyTorch) {
  nn::BatchNorm2d bn(3);
  EXPECT_EQ(keys(bn->state_dict()),
            (std::vector<std::string>{"bias", "num_batches_tracked", "running_mean", "running_var", "weight"}));
  EXPECT_EQ(bn->parameters().size(), 2u);
  EXPECT_EQ(bn->buffers().size(), 3u);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn->num_batches_tracked.dim(), 0);
  EXPECT_TRUE(all_close(bn->weight, ones({3}), 0, 0));
  EXPECT_TRUE(all_close(bn->bias, zeros({3}), 0, 0));
  EXPECT_TRUE(all_close(bn->running_mean, zeros({3}), 0, 0));
  EXPECT_TRUE(all_close(bn->running_var, ones({3}), 0, 0));

  nn::BatchNorm1d plain(nn::BatchNormOptions(4).affine(false).track_running_stats(false));
  EXPECT_TRUE(plain->state_dict().empty());
}

TEST(NnBatchNorm, RunningStatisticsAfterTwoSteps) {
  nn::BatchNorm2d bn(3);
  perturb(*bn, 1);
  const Tensor x1 = seeded({4, 3, 5, 2}, 10, 2.0, 1.0), x2 = seeded({2, 3, 3, 3}, 11, 0.5, -2.0);
  const Tensor y1 = bn(x1);
  bn(x2);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  // By hand: r = 0.9 r + 0.1 * (batch mean, unbiased batch variance), from (0, 1).
  auto mean = [](const Tensor& x) { return x.mean({0, 2, 3}); };
  auto var = [](const Tensor& x) { return x.var({0, 2, 3}, 1); };
  const Tensor rm = (zeros({3}) * 0.9 + mean(x1) * 0.1) * 0.9 + mean(x2) * 0.1;
  const Tensor rv = (ones({3}) * 0.9 + var(x1) * 0.1) * 0.9 + var(x2) * 0.1;
  EXPECT_TRUE(all_close(bn->running_mean, rm, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(bn->running_var, rv, 1e-5, 1e-6));
  // Training output: the batch's mean and biased variance.
  const Tensor w = bn->weight.detach().reshape({1, 3, 1, 1}), b = bn->bias.detach().reshape({1, 3, 1, 1});
  const Tensor m1 = x1.mean({0, 2, 3}, true), v1 = x1.var({0, 2, 3}, 0, true);
  EXPECT_TRUE(all_close(y1, (x1 - m1) / (v1 + 1e-5).sqrt() * w + b, 1e-5, 1e-5));
}

TEST(NnBatchNorm, CumulativeAverageWithoutMomentum) {
  nn::BatchNorm1d bn(nn::BatchNormOptions(2).momentum(std::nullopt));
  const Tensor x1 = seeded({6, 2}, 12, 1.0, 3.0), x2 = seeded({5, 2}, 13, 2.0, -1.0);
  bn(x1);
  bn(x2);
  EXPECT_TRUE(all_close(bn->running_mean, (x1.mean({0}) + x2.mean({0})) / 2, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(bn->running_var, (x1.var({0}) + x2.var({0})) / 2, 1e-5, 1e-6));
}

TEST(NnBatchNorm, EvalUsesTheRunningStatisticsAndLeavesThemAlone) {
  nn::BatchNorm2d bn(3);
  perturb(*bn, 2);
  bn(seeded({4, 3, 4, 4}, 14, 1.5, 0.5));
  bn->eval();
  const Tensor rm = bn->running_mean.clone(), rv = bn->running_var.clone();
  const Tensor x = seeded({2, 3, 4, 4}, 15);
  const Tensor y = bn(x);
  const Tensor want = (x - rm.reshape({1, 3, 1, 1})) / (rv.reshape({1, 3, 1, 1}) + 1e-5).sqrt() *
                          bn->weight.detach().reshape({1, 3, 1, 1}) +
                      bn->bias.detach().reshape({1, 3, 1, 1});
  EXPECT_TRUE(all_close(y, want, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(bn->running_mean, rm, 0, 0));
  EXPECT_TRUE(all_close(bn->running_var, rv, 0, 0));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
}

TEST(NnBatchNorm, WithoutRunningStatisticsEvalUsesTheBatch) {
  nn::BatchNorm1d bn(nn::BatchNormOptions(3).track_running_stats(false));
  EXPECT_FALSE(bn->running_mean.defined());
  const Tensor x = seeded({5, 3, 4}, 16, 2.0, 1.0);
  const Tensor train_out = bn(x);
  bn->eval();
  EXPECT_TRUE(all_close(bn(x), train_out, 0, 0));
  EXPECT_TRUE(all_close(train_out, F::batch_norm(x, std::nullopt, std::nullopt, bn->weight, bn->bias, true), 0, 0));
}

TEST(NnBatchNorm, BadInputsNameTheLayer) {
  nn::BatchNorm2d bn(3);
  EXPECT_EMBER_ERROR(bn(seeded({2, 4, 3, 3}, 17)), "BatchNorm2d", "3 channels", "got 4");
  EXPECT_EMBER_ERROR(bn(seeded({2, 3, 3}, 17)), "BatchNorm2d", "4-D");
  nn::BatchNorm1d bn1(3);
  EXPECT_EMBER_ERROR(bn1(seeded({2, 3, 3, 3}, 17)), "BatchNorm1d", "2-D (N, C) or 3-D (N, C, L)");
  EXPECT_EMBER_ERROR(bn1(seeded({2, 5}, 17)), "BatchNorm1d", "3 channels");
  EXPECT_EMBER_ERROR(nn::BatchNorm2d(nn::BatchNormOptions(3).momentum(1.5)), "BatchNorm2d", "momentum");
  EXPECT_EMBER_ERROR(nn::BatchNorm2d(0), "BatchNorm2d", "num_features");
}

TEST(NnBatchNorm, PrintingAndGradients) {
  nn::BatchNorm2d bn(4);
  EXPECT_EQ(printed(*bn), "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  EXPECT_EQ(printed(*nn::BatchNorm1d(nn::BatchNormOptions(2).momentum(std::nullopt).affine(false))),
            "BatchNorm1d(2, eps=1e-05, momentum=nullopt, affine=false, track_running_stats=true)");
  const Tensor x = seeded({3, 4, 2, 2}, 18).requires_grad_();
  (bn(x) * seeded({3, 4, 2, 2}, 19)).sum().backward();
  expect_finite_grads(*bn);
  ASSERT_TRUE(x.grad().defined());
}

// ---- LayerNorm, GroupNorm, RMSNorm ----

TEST(NnNorm, LayerNormParametersAndForward) {
  nn::LayerNorm ln(nn::LayerNormOptions({4, 5}).eps(1e-3));
  EXPECT_EQ(keys(ln->state_dict()), (std::vector<std::string>{"bias", "weight"}));
  EXPECT_EQ(ln->weight.sizes(), IntArrayRef({4, 5}));
  perturb(*ln, 3);
  const Tensor x = seeded({2, 3, 4, 5}, 20);
  EXPECT_TRUE(all_close(ln(x), F::layer_norm(x, {4, 5}, ln->weight, ln->bias, 1e-3), 0, 0));

  nn::LayerNorm no_bias(nn::LayerNormOptions({5}).bias(false));
  EXPECT_EQ(keys(no_bias->state_dict()), (std::vector<std::string>{"weight"}));
  nn::LayerNorm plain(nn::LayerNormOptions({5}).elementwise_affine(false));
  EXPECT_TRUE(plain->state_dict().empty());
  EXPECT_TRUE(all_close(plain(x), F::layer_norm(x, {5}), 0, 0));
  EXPECT_EQ(printed(*ln), "LayerNorm([4, 5], eps=0.001, elementwise_affine=true)");
  EXPECT_EQ(printed(*no_bias), "LayerNorm([5], eps=1e-05, elementwise_affine=true, bias=false)");
}

TEST(NnNorm, GroupNormParametersAndForward) {
  nn::GroupNorm gn(2, 6);
  EXPECT_EQ(keys(gn->state_dict()), (std::vector<std::string>{"bias", "weight"}));
  EXPECT_EQ(gn->weight.sizes(), IntArrayRef({6}));
  perturb(*gn, 4);
  const Tensor x = seeded({3, 6, 4}, 21);
  EXPECT_TRUE(all_close(gn(x), F::group_norm(x, 2, gn->weight, gn->bias), 0, 0));
  EXPECT_EQ(printed(*gn), "GroupNorm(2, 6, eps=1e-05, affine=true)");
  EXPECT_TRUE(nn::GroupNorm(nn::GroupNormOptions(3, 6).affine(false))->state_dict().empty());
}

TEST(NnNorm, RMSNormParametersAndForward) {
  nn::RMSNorm rms(nn::RMSNormOptions({8}));
  EXPECT_EQ(keys(rms->state_dict()), (std::vector<std::string>{"weight"}));
  perturb(*rms, 5);
  const Tensor x = seeded({3, 8}, 22);
  EXPECT_TRUE(all_close(rms(x), F::rms_norm(x, {8}, rms->weight), 0, 0));
  // By hand, with eps the float32 machine epsilon.
  const Tensor want = x / ((x * x).mean({1}, true) + 1.1920928955078125e-07).sqrt() * rms->weight.detach();
  EXPECT_TRUE(all_close(rms(x), want, 1e-5, 1e-6));
  EXPECT_EQ(printed(*rms), "RMSNorm([8], eps=nullopt, elementwise_affine=true)");
  nn::RMSNorm eps(nn::RMSNormOptions({8}).eps(0.5).elementwise_affine(false));
  EXPECT_TRUE(all_close(eps(x), F::rms_norm(x, {8}, std::nullopt, 0.5), 0, 0));
}

TEST(NnNorm, BadInputsNameTheLayer) {
  nn::LayerNorm ln(nn::LayerNormOptions({4, 5}));
  EXPECT_EMBER_ERROR(ln(seeded({2, 5, 4}, 23)), "LayerNorm", "[4, 5] (normalized_shape)", "[2, 5, 4]");
  nn::RMSNorm rms(nn::RMSNormOptions({3}));
  EXPECT_EMBER_ERROR(rms(seeded({2, 4}, 23)), "RMSNorm", "normalized_shape");
  nn::GroupNorm gn(2, 4);
  EXPECT_EMBER_ERROR(gn(seeded({2, 6, 3}, 23)), "GroupNorm", "4 channels", "got 6");
  EXPECT_EMBER_ERROR(nn::GroupNorm(4, 6), "GroupNorm", "num_channels (6)", "num_groups (4)");
  EXPECT_EMBER_ERROR(nn::LayerNorm(nn::LayerNormOptions({})), "LayerNorm", "at least one dim");
}

TEST(NnNorm, GradientsReachEveryParameter) {
  nn::LayerNorm ln(nn::LayerNormOptions({6}));
  nn::GroupNorm gn(3, 6);
  nn::RMSNorm rms(nn::RMSNormOptions({6}));
  ln->to(kFloat64);
  gn->to(kFloat64);
  rms->to(kFloat64);
  const Tensor x = seeded({2, 6}, 24).to(kFloat64);
  const Tensor cot = seeded({2, 6}, 25).to(kFloat64);
  auto loss = [&] { return ((ln(x) + gn(x) + rms(x)) * cot).sum(); };
  expect_parameter_grads_match_finite_differences(*ln, loss);
  expect_parameter_grads_match_finite_differences(*gn, loss);
  expect_parameter_grads_match_finite_differences(*rms, loss);
}

// ---- Embedding ----

TEST(NnEmbedding, InitIsStandardNormalWithThePaddingRowZero) {
  manual_seed(5);
  nn::Embedding emb(nn::EmbeddingOptions(1000, 64).padding_idx(3));
  EXPECT_EQ(keys(emb->state_dict()), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(emb->weight.sizes(), IntArrayRef({1000, 64}));
  EXPECT_TRUE(all_close(emb->weight[3], zeros({64}), 0, 0));
  EXPECT_NEAR(emb->weight.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(emb->weight.std().item<double>(), 1.0, 0.01);
  // A negative padding_idx counts from the end.
  nn::Embedding last(nn::EmbeddingOptions(10, 4).padding_idx(-1));
  EXPECT_EQ(last->options.padding_idx(), 9);
  EXPECT_TRUE(all_close(last->weight[9], zeros({4}), 0, 0));
  EXPECT_EQ(printed(*last), "Embedding(10, 4, padding_idx=9)");
  EXPECT_EQ(printed(*nn::Embedding(5, 2)), "Embedding(5, 2)");
}

TEST(NnEmbedding, LooksUpRowsAndThePaddingRowGetsNoGradient) {
  nn::Embedding emb(nn::EmbeddingOptions(7, 3).padding_idx(2));
  const Tensor ids = tensor({0, 2, 6, 2, 1, 0}).reshape({2, 3});
  const Tensor y = emb(ids);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3, 3}));
  EXPECT_TRUE(all_close(y, emb->weight.index_select(0, ids.flatten()).reshape({2, 3, 3}), 0, 0));
  EXPECT_TRUE(all_close(emb(ids.to(kInt32)), y, 0, 0));
  (y * seeded({2, 3, 3}, 26)).sum().backward();
  const Tensor g = emb->weight.grad();
  ASSERT_TRUE(g.defined());
  EXPECT_TRUE(all_close(g[2], zeros({3}), 0, 0));
  EXPECT_TRUE(all_close(g[3], zeros({3}), 0, 0));  // never looked up
  EXPECT_GT(g[0].abs().sum().item<double>(), 0.0);
}

TEST(NnEmbedding, FromPretrainedSharesTheTable) {
  const Tensor table = seeded({5, 3}, 27);
  nn::Embedding frozen = nn::Embedding::from_pretrained(table, true, 1);
  EXPECT_EQ(frozen->weight.data_ptr(), table.data_ptr());
  EXPECT_FALSE(frozen->weight.requires_grad());
  EXPECT_FALSE(table.requires_grad());
  EXPECT_TRUE(all_close(frozen->weight[1], table[1], 0, 0));  // the padding row is left as it is
  EXPECT_EQ(frozen->options.padding_idx(), 1);
  EXPECT_TRUE(all_close(frozen(tensor({4, 0})), table.index_select(0, tensor({4, 0})), 0, 0));
  nn::Embedding trained = nn::Embedding::from_pretrained(table, false);
  EXPECT_TRUE(trained->weight.requires_grad());
}

TEST(NnEmbedding, BadArgumentsNameTheLayer) {
  nn::Embedding emb(4, 2);
  EXPECT_EMBER_ERROR(emb(zeros({3})), "Embedding", "int64 or int32", "float32");
  EXPECT_EMBER_ERROR(nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)), "Embedding", "padding_idx", "got 4");
  EXPECT_EMBER_ERROR(nn::Embedding(0, 2), "Embedding", "positive");
  EXPECT_EMBER_ERROR(nn::Embedding(nn::EmbeddingOptions(4, 2)._weight(zeros({4, 3}))), "Embedding", "_weight",
                     "[4, 2]");
  EXPECT_EMBER_ERROR(nn::Embedding::from_pretrained(zeros({4})), "from_pretrained", "2-D");
}

}  // namespace
}  // namespace ember::testing
