// The tensor helpers libtorch programs use: accessor<T, N>(), isclose and
// allclose, the free flatten, TensorOptions().requires_grad(), and
// Tensor::set_data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Accessor, ReadsAndWritesThroughTheStrides) {
  Tensor m = zeros({2, 3});
  auto a = m.accessor<float, 2>();
  EXPECT_EQ(a.size(0), 2);
  EXPECT_EQ(a.size(1), 3);
  for (int64_t i = 0; i < a.size(0); ++i)
    for (int64_t j = 0; j < a.size(1); ++j) a[i][j] = static_cast<float>(10 * i + j);
  EXPECT_EQ(values(m), (std::vector<double>{0, 1, 2, 10, 11, 12}));
  // A transposed view: indices follow its own sizes and strides.
  const Tensor t = m.t();
  const auto at = t.accessor<float, 2>();
  EXPECT_EQ(at[2][1], 12.0f);
  EXPECT_EQ(at.stride(0), 1);
  const Tensor ids = arange(5, kInt64);
  EXPECT_EQ((ids.accessor<int64_t, 1>()[4]), 4);
}

TEST(Accessor, ChecksDtypeDimsAndDevice) {
  const Tensor m = zeros({2, 3});
  EXPECT_EMBER_ERROR((m.accessor<double, 2>()), "accessor<float64, 2>", "float32");
  EXPECT_EMBER_ERROR((m.accessor<float, 3>()), "accessor<float32, 3>", "3 dims", "got 2");
  const Tensor undefined;
  EXPECT_EMBER_ERROR((undefined.accessor<float, 1>()), "undefined");
}

// accessor() borrows the tensor's sizes and strides: not on a temporary.
template <class T>
concept AccessibleRvalue = requires(T t) { std::move(t).template accessor<float, 1>(); };
static_assert(!AccessibleRvalue<Tensor>);

TEST(IsClose, TolerancesInfinitiesAndNaN) {
  const Tensor a = tensor({1.0, 1.0, kInf, kInf, kNaN, 100.0});
  const Tensor b = tensor({1.0 + 1e-9, 1.1, kInf, -kInf, kNaN, 100.005});
  EXPECT_EQ(values(isclose(a, b)), (std::vector<double>{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(values(isclose(a, b, 1e-5, 1e-8, /*equal_nan=*/true)), (std::vector<double>{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(values(isclose(a, b, /*rtol=*/1e-5, /*atol=*/0.1)), (std::vector<double>{1, 1, 1, 0, 0, 1}));
  // An infinity is never within a finite tolerance of a finite value, however large rtol * |b| is.
  EXPECT_FALSE(allclose(tensor({1.0}), tensor({kInf}), 1.0, 1.0));
  EXPECT_TRUE(allclose(ones({2, 3}), ones({3})));  // broadcast
  EXPECT_FALSE(allclose(a, b));
  EXPECT_TRUE(allclose(tensor({1, 2}), tensor({1, 2})));
  EXPECT_EMBER_ERROR(allclose(ones({2}), ones({2}, kFloat64)), "isclose", "one dtype", "float32", "float64");
}

TEST(Flatten, FreeFunctionMatchesTheMethod) {
  const Tensor x = randn({2, 3, 4, 5});
  EXPECT_EQ(flatten(x, 1).sizes(), IntArrayRef({2, 60}));
  EXPECT_EQ(flatten(x, 1, 2).sizes(), IntArrayRef({2, 12, 5}));
  EXPECT_EQ(flatten(x).sizes(), IntArrayRef({120}));
  EXPECT_EQ(values(flatten(x, 1)), values(x.flatten(1)));
}

TEST(TensorOptions, RequiresGradMakesLeavesThatRequireGrad) {
  const TensorOptions o = TensorOptions().dtype(kFloat64).requires_grad(true);
  for (const Tensor& t : {zeros({2}, o), ones({2}, o), full({2}, 3.0, o), empty({2}, o), rand({2}, o), randn({2}, o),
                          arange(0.0, 2.0, 1.0, o), linspace(0, 1, 2, o), eye(2, std::nullopt, o),
                          tensor({1.0, 2.0}, o), zeros_like(ones({2}), o)}) {
    EXPECT_TRUE(t.requires_grad());
    EXPECT_TRUE(t.is_leaf());
    EXPECT_EQ(t.dtype(), kFloat64);
  }
  EXPECT_FALSE(zeros({2}).requires_grad());
  Tensor w = randn({3}, TensorOptions().requires_grad(true));
  (w * w).sum().backward();
  EXPECT_TRUE(all_close(w.grad(), w.detach() * 2));
  EXPECT_EMBER_ERROR(randint(0, 3, {2}, TensorOptions(kInt64).requires_grad(true)), "requires_grad",
                     "floating-point");
}

TEST(SetData, KeepsTheTensorAndSwapsItsData) {
  const Tensor p = ones({2, 3}).requires_grad_();
  const Tensor alias = p;  // another handle, as an optimiser holds
  (p * 2).sum().backward();
  p.set_data(full({4}, 5.0, kFloat64));
  EXPECT_EQ(alias.dtype(), kFloat64);
  EXPECT_EQ(alias.sizes(), IntArrayRef({4}));
  EXPECT_EQ(values(alias), std::vector<double>(4, 5.0));
  EXPECT_TRUE(alias.requires_grad());
  EXPECT_TRUE(alias.is_leaf());
  p.set_grad(Tensor());
  (p * 3).sum().backward();  // a new accumulator for the new dtype and shape
  EXPECT_EQ(p.grad().dtype(), kFloat64);
  EXPECT_EQ(values(p.grad()), std::vector<double>(4, 3.0));
  EXPECT_EMBER_ERROR((p * 2).set_data(zeros({4})), "set_data", "leaf");
  EXPECT_EMBER_ERROR(p.set_data(zeros({4}, kInt64)), "set_data", "floating point");
}

}  // namespace
}  // namespace ember::testing
