// Gradients of the pooling family through ember::nn::functional: gradcheck
// and gradgradcheck in float64 (every backward op has a derivative of its
// own, so second derivatives exist; max_pool2d's is exact away from ties).
// The op-info rows gradcheck each op and backward op on their own samples
// (tests/autograd_gradcheck.cpp); these run the functional forms, including
// the compositions (interpolate of a 3-D input, pad modes, F::max_pool2d).
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/gradcheck.h"
#include "ember/nn/functional/pooling.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using autograd::gradcheck;
using autograd::GradcheckFunction;
using autograd::gradgradcheck;

Tensor input(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return randn(shape, kFloat64, &g).requires_grad_();
}

// Distinct values 0.1 apart, shuffled: no ties for max pooling.
Tensor distinct_input(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  auto [sorted, order] = rand({n}, kFloat64, &g).sort();
  return (order.to(kFloat64) * 0.1).reshape(shape).detach().requires_grad_();
}

void expect_both(const GradcheckFunction& fn, const Tensor& x) {
  const autograd::GradcheckResult first = gradcheck(fn, {x});
  EXPECT_TRUE(first) << first.report;
  const autograd::GradcheckResult second = gradgradcheck(fn, {x});
  EXPECT_TRUE(second) << second.report;
}

TEST(PoolingGradients, MaxPool2d) {
  expect_both(
      [](const TensorList& in) {
        return TensorList{F::max_pool2d(in[0], {3, 2}, {2, 1}, 1, {1, 2}, true)};
      },
      distinct_input({2, 2, 7, 6}, 1));
  expect_both([](const TensorList& in) { return TensorList{F::max_pool2d(in[0], 2)}; }, distinct_input({3, 5, 4}, 2));
}

TEST(PoolingGradients, AvgPool2d) {
  expect_both([](const TensorList& in) { return TensorList{F::avg_pool2d(in[0], 3, 2, 1, true, false)}; },
              input({2, 2, 7, 6}, 3));
  expect_both(
      [](const TensorList& in) {
        return TensorList{F::avg_pool2d(in[0], {2, 3}, {}, 0, false, true, 4)};
      },
      input({1, 3, 6, 7}, 4));
}

TEST(PoolingGradients, AdaptiveAvgPool2d) {
  expect_both(
      [](const TensorList& in) {
        return TensorList{F::adaptive_avg_pool2d(in[0], {3, 4})};
      },
      input({2, 2, 7, 9}, 5));
  expect_both(
      [](const TensorList& in) {
        return TensorList{F::adaptive_avg_pool2d(in[0], {5, 7})};
      },
      input({3, 3, 5}, 6));
}

TEST(PoolingGradients, Pad) {
  const Tensor x = input({2, 2, 5, 6}, 7);
  expect_both([](const TensorList& in) { return TensorList{F::pad(in[0], {1, -2, 2, 1}, "constant", 0.5)}; }, x);
  expect_both([](const TensorList& in) { return TensorList{F::pad(in[0], {3, 1, -1, 4}, "reflect")}; }, x);
  expect_both([](const TensorList& in) { return TensorList{F::pad(in[0], {4, 0, 2, 6}, "replicate")}; }, x);
  expect_both([](const TensorList& in) { return TensorList{F::pad(in[0], {1, 1, 1, 2, 0, 1}, "replicate")}; }, x);
}

TEST(PoolingGradients, Interpolate) {
  F::InterpolateOptions bilinear;
  bilinear.size = std::vector<int64_t>{7, 4};
  bilinear.mode = "bilinear";
  F::InterpolateOptions corners = bilinear;
  corners.align_corners = true;
  F::InterpolateOptions nearest;
  nearest.scale_factor = std::vector<double>{1.7};
  const Tensor x = input({2, 2, 4, 5}, 8);
  expect_both([&](const TensorList& in) { return TensorList{F::interpolate(in[0], bilinear)}; }, x);
  expect_both([&](const TensorList& in) { return TensorList{F::interpolate(in[0], corners)}; }, x);
  expect_both([&](const TensorList& in) { return TensorList{F::interpolate(in[0], nearest)}; }, x);
  expect_both([&](const TensorList& in) { return TensorList{F::interpolate(in[0], nearest)}; }, input({2, 3, 5}, 9));
}

}  // namespace
}  // namespace ember::testing
