// The activations of ember::nn::functional: values at special points,
// gradients at the kinks (PyTorch's branches), the defaults, errors, and
// that the SIMD and scalar paths of a float32 kernel give the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "ember/ember.h"
#include "ember/nn/functional/activation.h"
#include "test_util.h"

namespace ember {
namespace {

namespace F = ember::nn::functional;
using ::ember::testing::all_close;
using ::ember::testing::values;
using Values = std::vector<double>;

Tensor from(const Values& v, DType dtype = kFloat64) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t.to(dtype);
}

// d f(x) / dx at each point, through the op's backward.
Tensor derivative(Tensor (*f)(const Tensor&), const Values& at) {
  Tensor x = from(at).requires_grad_();
  return autograd::grad({f(x).sum()}, {x})[0];
}

TEST(Activation, GradientsAtTheKinksFollowTorch) {
  // leaky_relu'(0) is the slope (x > 0 picks the identity branch only for positive x).
  Tensor x = from({0.0, -0.0, 1.0}).requires_grad_();
  EXPECT_TRUE(all_close(autograd::grad({F::leaky_relu(x, 0.2).sum()}, {x})[0], from({0.2, 0.2, 1.0})));
  // hardswish' is x/3 + 1/2 on [-3, 3], both ends included: -1/2 at -3, 3/2 at 3.
  EXPECT_TRUE(all_close(derivative(F::hardswish, {-3.0, 3.0, -3.5, 3.5}), from({-0.5, 1.5, 0.0, 1.0})));
  // hardsigmoid' is 1/6 strictly inside (-3, 3), 0 at the ends.
  EXPECT_TRUE(all_close(derivative(F::hardsigmoid, {-3.0, 3.0, 0.0}), from({0.0, 0.0, 1.0 / 6})));
  // elu' at 0 takes the exponential branch: alpha e^0 = alpha.
  Tensor y = from({0.0}).requires_grad_();
  EXPECT_TRUE(all_close(autograd::grad({F::elu(y, 2.0).sum()}, {y})[0], from({2.0})));
}

TEST(Activation, DefaultsAreTorchs) {
  const Tensor x = from({-2.0, 3.0});
  EXPECT_TRUE(all_close(F::leaky_relu(x), from({-0.02, 3.0})));
  EXPECT_TRUE(all_close(F::elu(x), from({std::expm1(-2.0), 3.0})));
}

TEST(Activation, ExtremeInputsNeitherOverflowNorLoseTheTail) {
  const Tensor x = from({-100.0, 100.0, -1e-8}, kFloat32);
  EXPECT_TRUE(all_close(F::log_sigmoid(x), from({-100.0, -std::exp(-100.0), std::log(0.5)}, kFloat32), 1e-6));
  EXPECT_TRUE(all_close(F::mish(from({30.0, -30.0}, kFloat32)), from({30.0, -30.0 * std::tanh(std::log1p(std::exp(-30.0)))}, kFloat32)));
  // elu near 0 uses expm1: alpha (e^x - 1) keeps its relative accuracy.
  EXPECT_TRUE(all_close(F::elu(from({-1e-6}, kFloat32)), from({std::expm1(-1e-6)}, kFloat32), 1e-6, 0));
}

TEST(Activation, VectorAndScalarPathsGiveTheSameBits) {
  // A transposed input runs the scalar (strided) loop, a contiguous one the SIMD loop.
  manual_seed(11);
  const Tensor a = randn({37, 41}) * 5;
  const Tensor t = a.t().contiguous().t();  // same values, strided
  for (Tensor (*f)(const Tensor&) : {F::hardswish, F::hardsigmoid, F::mish, F::log_sigmoid}) {
    const Tensor x = f(a).contiguous(), y = f(t).contiguous();
    EXPECT_EQ(std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()), 0);
  }
  const Tensor x = F::elu(a, 0.7).contiguous(), y = F::elu(t, 0.7).contiguous();
  EXPECT_EQ(std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()), 0);
}

TEST(Activation, ReducedPrecisionComputesInFloat) {
  const Tensor x = from({-2.5, -0.5, 0.75, 4.0}, kBFloat16);
  for (Tensor (*f)(const Tensor&) : {F::hardswish, F::hardsigmoid, F::mish, F::log_sigmoid}) {
    const Tensor y = f(x);
    EXPECT_EQ(y.dtype(), kBFloat16);
    EXPECT_TRUE(all_close(y.to(kFloat64), f(x.to(kFloat64)), 1e-2, 1e-2));
  }
  EXPECT_EQ(F::elu(from({1.0}, kFloat16)).dtype(), kFloat16);
}

TEST(ActivationErrors, IntegerInputsAreRefusedNamingTheOp) {
  const Tensor i = tensor({1, -2});
  EXPECT_EMBER_ERROR(F::leaky_relu(i), "leaky_relu", "int64");
  EXPECT_EMBER_ERROR(F::elu(i), "elu", "int64");
  EXPECT_EMBER_ERROR(F::hardswish(i), "hardswish");
  EXPECT_EMBER_ERROR(F::hardsigmoid(i), "hardsigmoid");
  EXPECT_EMBER_ERROR(F::mish(i), "mish");
  EXPECT_EMBER_ERROR(F::log_sigmoid(i), "log_sigmoid");
}

}  // namespace
}  // namespace ember
