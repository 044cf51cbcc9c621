// Second derivatives of the norm family, and the two backward paths agreeing
// (Note [Two paths for the norm backward] in autograd/formulas_norm.cpp).
//
//   NormGradgrad.*          gradgradcheck through the public functions: softmax and
//                           log_softmax (rows and a strided dim), layer_norm with and
//                           without affine parameters, and also rms_norm,
//                           group_norm and training batch_norm
//   NormBackwardPaths.*     the fused backward kernel (plain backward) and the
//                           composite one (create_graph) give the same gradients,
//                           including gradients flowing into the statistics results
#include <gtest/gtest.h>

#include "core/op_decls_norm.h"
#include "ember/autograd.h"
#include "ember/gradcheck.h"
#include "ember/nn/functional/norm.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using autograd::gradcheck;
using autograd::GradcheckResult;
using autograd::gradgradcheck;

Tensor input(IntArrayRef sizes, uint64_t seed, double scale = 1) {
  Generator g(seed);
  return (randn(sizes, kFloat64, &g) * scale).detach().requires_grad_();
}

TEST(NormGradgrad, SoftmaxRowsAndColumns) {
  for (int64_t dim : {-1, 0, 1}) {
    const Tensor x = input({3, 4, 5}, 1);
    auto fn = [dim](const TensorList& in) { return TensorList{F::softmax(in[0], dim)}; };
    const GradcheckResult r = gradgradcheck(fn, {x});
    EXPECT_TRUE(r) << "dim " << dim << ": " << r.report;
  }
}

TEST(NormGradgrad, LogSoftmaxRowsAndColumns) {
  for (int64_t dim : {-1, 0}) {
    const Tensor x = input({4, 6}, 2);
    auto fn = [dim](const TensorList& in) { return TensorList{F::log_softmax(in[0], dim)}; };
    const GradcheckResult r = gradgradcheck(fn, {x});
    EXPECT_TRUE(r) << "dim " << dim << ": " << r.report;
  }
}

TEST(NormGradgrad, SoftmaxThirdOrderThroughTheBackwardOps) {
  // The backward ops' formulas are themselves written with ember ops: check them directly.
  const Tensor g = input({3, 5}, 3), y = F::softmax(input({3, 5}, 4), -1).detach().requires_grad_();
  auto fn = [](const TensorList& in) { return TensorList{op::softmax_backward.call(in[0], in[1], -1)}; };
  EXPECT_TRUE(gradgradcheck(fn, {g, y}));
  auto log_fn = [](const TensorList& in) { return TensorList{op::log_softmax_backward.call(in[0], in[1], 1)}; };
  EXPECT_TRUE(gradgradcheck(log_fn, {g, y}));
}

TEST(NormGradgrad, LayerNormWithAndWithoutAffine) {
  const Tensor x = input({3, 2, 4}, 5), w = input({2, 4}, 6), b = input({2, 4}, 7);
  auto affine = [](const TensorList& in) { return TensorList{F::layer_norm(in[0], {2, 4}, in[1], in[2])}; };
  GradcheckResult r = gradgradcheck(affine, {x, w, b});
  EXPECT_TRUE(r) << r.report;
  auto plain = [](const TensorList& in) { return TensorList{F::layer_norm(in[0], {4}, std::nullopt, std::nullopt, 1e-3)}; };
  r = gradgradcheck(plain, {input({5, 4}, 8)});
  EXPECT_TRUE(r) << r.report;
}

TEST(NormGradgrad, LayerNormStatisticsResults) {
  // All three results of the op: gradients flow into mean and rstd too.
  const Tensor x = input({3, 5}, 9), w = input({5}, 10);
  auto fn = [](const TensorList& in) {
    auto [y, mean, rstd] = op::layer_norm.call(in[0], {5}, in[1], std::nullopt, 1e-5);
    return TensorList{y, mean, rstd};
  };
  const GradcheckResult r = gradgradcheck(fn, {x, w});
  EXPECT_TRUE(r) << r.report;
}

TEST(NormGradgrad, RmsGroupAndBatchNorm) {
  auto rms = [](const TensorList& in) { return TensorList{F::rms_norm(in[0], {4}, in[1])}; };
  GradcheckResult r = gradgradcheck(rms, {input({3, 4}, 11), input({4}, 12)});
  EXPECT_TRUE(r) << "rms_norm: " << r.report;
  auto group = [](const TensorList& in) { return TensorList{F::group_norm(in[0], 2, in[1], in[2])}; };
  r = gradgradcheck(group, {input({2, 4, 3}, 13), input({4}, 14), input({4}, 15)});
  EXPECT_TRUE(r) << "group_norm: " << r.report;
  auto batch = [](const TensorList& in) {
    return TensorList{F::batch_norm(in[0], std::nullopt, std::nullopt, in[1], in[2], /*training=*/true)};
  };
  r = gradgradcheck(batch, {input({4, 3, 2}, 16), input({3}, 17), input({3}, 18)});
  EXPECT_TRUE(r) << "batch_norm: " << r.report;
}

// Gradients of sum(results * v) w.r.t. `inputs`, by the plain (fused) and the recorded (composite) backward.
void expect_paths_agree(const std::function<TensorList(const TensorList&)>& fn, const TensorList& inputs,
                        uint64_t seed) {
  const TensorList outs = fn(inputs);
  TensorList vs;
  Generator g(seed);
  for (const Tensor& o : outs) vs.push_back(randn(o.sizes(), kFloat64, &g));
  const TensorList fused = autograd::grad(outs, inputs, vs, /*retain_graph=*/true, /*create_graph=*/false);
  const TensorList composite = autograd::grad(outs, inputs, vs, /*retain_graph=*/true, /*create_graph=*/true);
  ASSERT_EQ(fused.size(), composite.size());
  for (size_t k = 0; k < fused.size(); ++k) {
    EXPECT_TRUE(all_close(composite[k].detach(), fused[k], 1e-10, 1e-12)) << "input " << k;
  }
}

TEST(NormBackwardPaths, FusedAndCompositeAgree) {
  const Tensor x = input({4, 6}, 20, 3), w = input({6}, 21), b = input({6}, 22);
  expect_paths_agree(
      [](const TensorList& in) {
        auto [y, m, r] = op::layer_norm.call(in[0], {6}, in[1], in[2], 1e-5);
        return TensorList{y, m, r};
      },
      {x, w, b}, 1);
  expect_paths_agree(
      [](const TensorList& in) {
        auto [y, r] = op::rms_norm.call(in[0], {6}, in[1], std::nullopt);
        return TensorList{y, r};
      },
      {x, w}, 2);
  const Tensor xc = input({3, 6, 5}, 23);
  expect_paths_agree(
      [](const TensorList& in) {
        auto [y, m, r] = op::group_norm.call(in[0], 3, in[1], in[2], 1e-5);
        return TensorList{y, m, r};
      },
      {xc, w, b}, 3);
  for (const bool training : {true, false}) {
    const Tensor rm = input({6}, 24).detach(), rv = (input({6}, 25).detach().abs() + 0.5);
    const Tensor rm_in = rm.clone().requires_grad_(), rv_in = rv.clone().requires_grad_();
    expect_paths_agree(
        [training](const TensorList& in) {
          auto [y, m, r] = op::batch_norm.call(in[0], in[1], in[2], training ? std::optional<Tensor>() : in[3],
                                               training ? std::optional<Tensor>() : in[4], training, 0.1, 1e-5);
          return TensorList{y, m, r};
        },
        training ? TensorList{xc, w, b} : TensorList{xc, w, b, rm_in, rv_in}, 4);
  }
}

}  // namespace
}  // namespace ember::testing
