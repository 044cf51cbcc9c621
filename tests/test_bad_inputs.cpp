// Bad inputs that used to crash or answer silently: integer MIN / -1 (a
// SIGFPE), scalars that do not fit the tensor's dtype, malformed device
// strings, and undefined tensors. Each raises an ember::Error or has a
// defined result, as PyTorch does (checked against torch 1.13).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- integer MIN / -1 (Note [Integer division overflow]) ----

TEST(IntegerDivisionOverflow, MinByMinusOneWrapsInsteadOfTrapping) {
  for (DType t : {kInt64, kInt32}) {
    const int64_t min = t == kInt64 ? INT64_MIN : INT32_MIN;
    // Several elements, so the contiguous (vectorisable) loop runs too.
    const Tensor a = full({9}, min, t), b = full({9}, -1, t);
    for (const char* mode : {"trunc", "floor"}) {
      const Tensor q = div(a, b, mode);
      EXPECT_EQ(q.dtype(), t);
      EXPECT_EQ(values(q), std::vector<double>(9, static_cast<double>(min))) << t << " " << mode;
    }
    EXPECT_EQ(values(remainder(a, b)), std::vector<double>(9, 0.0)) << t;
    EXPECT_EQ(values(a.remainder(-1)), std::vector<double>(9, 0.0)) << t;
    EXPECT_EQ(values(a.div(full({}, -1, t), "floor")), std::vector<double>(9, static_cast<double>(min))) << t;
  }
}

TEST(IntegerDivisionOverflow, OtherQuotientsKeepTheirRounding) {
  const Tensor a = tensor(std::initializer_list<int64_t>{7, -7, 7, -7, INT64_MIN, INT64_MIN});
  const Tensor b = tensor({2, 2, -2, -2, 1, 2});
  EXPECT_EQ(values(div(a, b, "trunc")), (std::vector<double>{3, -3, -3, 3, -9223372036854775808.0, -4611686018427387904.0}));
  EXPECT_EQ(values(div(a, b, "floor")), (std::vector<double>{3, -4, -4, 3, -9223372036854775808.0, -4611686018427387904.0}));
  EXPECT_EQ(values(remainder(a, b)), (std::vector<double>{1, 1, -1, -1, 0, 0}));
  EXPECT_EQ(values(remainder(tensor({-7, 7}), tensor({-1, -1}))), (std::vector<double>{0, 0}));
  EXPECT_EMBER_ERROR(div(a, tensor({0}), "trunc"), "div", "division by zero");
}

// ---- scalars that do not fit (Note [Scalar to dtype conversion]) ----

TEST(ScalarConversion, IntegerTargetsRejectValuesOutOfRange) {
  EXPECT_EMBER_ERROR(zeros({2}, kInt64).fill_(1e30), "fill_", "1e+30", "int64", "overflow");
  EXPECT_EMBER_ERROR(zeros({2}, kInt32).fill_(kNaN), "fill_", "nan", "int32");
  EXPECT_EMBER_ERROR(zeros({2}, kInt64).fill_(kInf), "fill_", "int64");
  EXPECT_EMBER_ERROR(full({2}, 300, kUInt8), "fill_", "300", "uint8");
  EXPECT_EMBER_ERROR(full({2}, -256, kUInt8), "-256", "uint8");
  EXPECT_EMBER_ERROR(full({2}, -1.0, kUInt8), "uint8");
  EXPECT_EMBER_ERROR(zeros({2}, kInt32).fill_(int64_t{1} << 31), "2147483648", "int32");
  EXPECT_EMBER_ERROR(zeros({2}, kInt32).fill_(2147483647.5), "int32");
  EXPECT_EMBER_ERROR(zeros({2}, kInt64).fill_(9223372036854775808.0), "int64");
  EXPECT_EMBER_ERROR(full_like(zeros({2}, kUInt8), 256), "uint8");
}

TEST(ScalarConversion, IntegerTargetsAcceptWhatPyTorchAccepts) {
  EXPECT_EQ(values(full({2}, -1, kUInt8)), (std::vector<double>{255, 255}));  // wraps, as in PyTorch
  EXPECT_EQ(values(full({2}, -255, kUInt8)), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(full({2}, 2.7, kInt32)), (std::vector<double>{2, 2}));
  EXPECT_EQ(values(full({2}, -2.7, kInt32)), (std::vector<double>{-2, -2}));
  EXPECT_EQ(full({1}, INT64_MAX, kInt64).item<int64_t>(), INT64_MAX);
  EXPECT_EQ(full({1}, -9223372036854775808.0, kInt64).item<int64_t>(), INT64_MIN);
  EXPECT_EQ(values(full({2}, true, kInt64)), (std::vector<double>{1, 1}));
}

TEST(ScalarConversion, FloatAndBoolTargetsFollowPyTorch) {
  EXPECT_EMBER_ERROR(full({2}, 1e300, kFloat32), "1e+300", "float32", "overflow");
  EXPECT_EMBER_ERROR(zeros({2}, kFloat16).fill_(70000), "float16");
  EXPECT_EMBER_ERROR(zeros({2}, kBFloat16).fill_(1e300), "bfloat16");
  EXPECT_EQ(values(full({1}, kInf, kFloat16)), (std::vector<double>{kInf}));  // inf and NaN convert
  EXPECT_TRUE(std::isnan(values(full({1}, kNaN, kFloat32))[0]));
  EXPECT_EQ(values(full({1}, 1e300, kFloat64)), (std::vector<double>{1e300}));
  EXPECT_EQ(values(full({2}, 5, kBool)), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(full({1}, kNaN, kBool)), (std::vector<double>{1}));
}

TEST(ScalarConversion, OpsTakingAFillValueCheckIt) {
  const Tensor x = tensor({2, 3}, kInt32), mask = tensor({true, false});
  EXPECT_EMBER_ERROR(x.masked_fill(mask, int64_t{1} << 40), "masked_fill", "int32");
  EXPECT_EMBER_ERROR(x.masked_fill(mask, 1e30), "masked_fill", "int32");
  EXPECT_EQ(values(x.masked_fill(mask, 2.5)), (std::vector<double>{2, 3}));
  EXPECT_EMBER_ERROR(x.clamp(int64_t{1} << 40, std::nullopt), "clamp", "int32");
  EXPECT_EMBER_ERROR(scatter(zeros({2}, kUInt8), 0, tensor({0}), 300), "scatter_value", "uint8");
  EXPECT_EMBER_ERROR(add(x, x, int64_t{1} << 40), "add", "int32");
  EXPECT_EMBER_ERROR(sub(x, x, int64_t{1} << 40), "sub", "int32");
  // where's scalar becomes an element of the result: checked against its dtype, as in PyTorch.
  const Tensor small = tensor({1, 2}, kUInt8);
  EXPECT_EMBER_ERROR(where(mask, small, 300), "where", "300", "uint8");
  EXPECT_EMBER_ERROR(where(mask, 300, small), "where", "300", "uint8");
  EXPECT_EQ(values(where(mask, small, 200)), (std::vector<double>{1, 200}));
  EXPECT_EQ(values(where(mask, small, 2.5)), (std::vector<double>{1, 2.5}));  // promotes to float32
  // A Scalar operand is not checked: integer arithmetic wraps, as in PyTorch (46, 47).
  EXPECT_EQ(values(tensor({2, 3}, kUInt8) + 300), (std::vector<double>{46, 47}));
}

TEST(ScalarConversion, IntegerToNegativeIntegerPowerRaises) {
  EXPECT_EMBER_ERROR(tensor({2, 3}).pow(-1), "pow", "negative integer powers");
  EXPECT_EMBER_ERROR(pow(tensor({2, 3}, kUInt8), -1), "pow", "negative integer powers");
  Tensor t = tensor({2, 3});
  EXPECT_EMBER_ERROR(t.pow_(-2), "pow_", "negative integer powers");
  EXPECT_EMBER_ERROR(tensor({true}).pow(-1), "pow");
  // A tensor exponent, a float exponent and 0 are fine, as in PyTorch.
  EXPECT_EQ(values(tensor({2, 3}).pow(tensor({-1, 1}))), (std::vector<double>{0, 3}));
  EXPECT_EQ(values(tensor({2, 3}).pow(0)), (std::vector<double>{1, 1}));
  EXPECT_NEAR(values(tensor({2, 4}).pow(-1.0))[1], 0.25, 1e-7);
}

// Scalar::to<integer>() of a floating value that no int64 holds would be an
// undefined cast; the public accessor raises instead.
TEST(ScalarConversion, ToIntegerRaisesForValuesNoInt64Holds) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (double v : {kNaN, kInf, -kInf, 1e30, 0x1p63, -0x1p64}) {
    EXPECT_EMBER_ERROR(Scalar(v).to<int64_t>(), "Scalar::to", "without overflow");
    EXPECT_EMBER_ERROR(Scalar(v).to_int(), "Scalar::to");
  }
  EXPECT_EQ(Scalar(2.7).to<int64_t>(), 2);
  EXPECT_EQ(Scalar(-2.7).to<int32_t>(), -2);
  EXPECT_EQ(Scalar(-0x1p63).to<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Scalar(0x1p63 - 1024).to<int64_t>(), int64_t{0x7ffffffffffffc00});
  EXPECT_TRUE(Scalar(kNaN).to<bool>());  // bool and floating targets take anything
  EXPECT_TRUE(std::isnan(Scalar(kNaN).to<double>()));
}

// ---- device strings and indices ----

TEST(DeviceParsing, AcceptsTheDocumentedForms) {
  EXPECT_EQ(Device("cpu"), Device::cpu());
  EXPECT_EQ(Device("cpu:0"), Device::cpu());
  EXPECT_EQ(Device("cuda"), Device::cuda(0));
  EXPECT_EQ(Device("cuda:3"), Device::cuda(3));
  EXPECT_EQ(Device("cuda:127").str(), "cuda:127");
}

TEST(DeviceParsing, RejectsMalformedStringsNamingThem) {
  for (const char* s : {"cuda:", "cuda:-1", "cuda:1x", "cuda:+1", "cuda: 1", "cuda:01", "gpu", "", "CUDA", "cpu:",
                        "cpu:1", "cudax"}) {
    const std::string quoted = std::string("'") + s + "'";
    EXPECT_EMBER_ERROR(Device{std::string(s)}, "Device", quoted.c_str(), "expected 'cpu'");
  }
}

TEST(DeviceParsing, RejectsIndicesOutOfRangeInsteadOfWrapping) {
  EXPECT_EMBER_ERROR(Device{std::string("cuda:300")}, "'cuda:300'", "out of range");
  EXPECT_EMBER_ERROR(Device{std::string("cuda:128")}, "'cuda:128'", "out of range");
  EXPECT_EMBER_ERROR(Device{std::string("cuda:99999999999")}, "'cuda:99999999999'", "out of range");
  EXPECT_EMBER_ERROR(Device::cuda(300), "[0, 127]", "300");
  EXPECT_EMBER_ERROR(Device::cuda(-1), "[0, 127]", "-1");
  EXPECT_EMBER_ERROR(Device(kCPU, 2), "cpu", "index 0");
}

// ---- sizes whose product overflows (checked_numel / checked_nbytes) ----

TEST(SizeOverflow, FactoriesRefuseSizesWhoseBytesOverflow) {
  constexpr int64_t k62 = int64_t{1} << 62, k31 = int64_t{1} << 31;
  // These used to give a 0-byte or 4-byte buffer, or crash.
  EXPECT_EMBER_ERROR(empty({k62}), "empty", "[4611686018427387904]", "float32", "2^63 bytes");
  EXPECT_EMBER_ERROR(empty({k62 + 1}), "empty", "2^63 bytes");
  EXPECT_EMBER_ERROR(zeros({k62}), "2^63 bytes");
  EXPECT_EMBER_ERROR(ones({k31, k31}), "[2147483648, 2147483648]", "2^63 bytes");
  EXPECT_EMBER_ERROR(empty({k62, 4}), "too many elements");
  EXPECT_EMBER_ERROR(empty({k62 / 4}, kFloat64), "float64", "2^63 bytes");
}

TEST(SizeOverflow, EmptyTensorsWhoseStridesWouldOverflowAreRefused) {
  constexpr int64_t k62 = int64_t{1} << 62;
  // 0 elements, but a contiguous stride of 2^124: found by fuzzing the IDX reader.
  EXPECT_EMBER_ERROR(empty({0, k62, k62}), "empty", "too many elements");
  EXPECT_EMBER_ERROR(zeros({0}).reshape({0, k62, k62}), "reshape", "too many elements");
  EXPECT_EMBER_ERROR(zeros({0}).view({k62, 0, k62}), "too many elements");
  EXPECT_EMBER_ERROR(empty_strided({2, 2}, {k62, k62}), "empty_strided", "2^63");
  // What fits still works, as in PyTorch.
  EXPECT_EQ(empty({0, k62}).numel(), 0);
  EXPECT_EQ(empty({0, k62}).strides(), (std::vector<int64_t>{k62, 1}));
}

// ---- undefined tensors (Note [Undefined tensors]) ----

TEST(UndefinedTensor, AccessorsRaiseNamingTheMethod) {
  const Tensor u;
  EXPECT_FALSE(u.defined());
  EXPECT_EMBER_ERROR(u.dim(), "dim: called on an undefined tensor", "x.grad() before backward");
  EXPECT_EMBER_ERROR(u.sizes(), "sizes: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.size(0), "undefined tensor");
  EXPECT_EMBER_ERROR(u.strides(), "strides: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.numel(), "numel: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.dtype(), "dtype: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.device(), "device: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.is_contiguous(), "is_contiguous: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.data_ptr(), "data_ptr", "undefined");
}

TEST(UndefinedTensor, OpsRaiseNamingTheArgument) {
  const Tensor u, x = ones({2});
  EXPECT_EMBER_ERROR(u + 1, "undefined tensor");
  EXPECT_EMBER_ERROR(x + u, "add: argument 'other' is an undefined tensor");
  EXPECT_EMBER_ERROR(u.sum(), "undefined tensor");
  EXPECT_EMBER_ERROR(u.exp(), "undefined tensor");
  EXPECT_EMBER_ERROR(mul(x, u), "mul: argument 'other' is an undefined tensor");
}

TEST(UndefinedTensor, AnUndefinedElementOfAListRaises) {
  const Tensor u, x = ones({2});
  EXPECT_EMBER_ERROR(cat({x, u}), "cat: argument 'tensors' holds an undefined tensor");
  EXPECT_EMBER_ERROR(stack({u, x}), "stack", "undefined");
}

TEST(UndefinedTensor, AutogradMethodsRaise) {
  const Tensor u;
  EXPECT_EMBER_ERROR(u.grad(), "grad: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.backward(), "backward: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.detach(), "detach: called on an undefined tensor");
  EXPECT_EMBER_ERROR(u.output_nr(), "output_nr: called on an undefined tensor");
  EXPECT_FALSE(u.requires_grad());
}

TEST(UndefinedTensor, GradBeforeBackwardSaysSo) {
  const Tensor w = ones({2}).requires_grad_();
  const Tensor g = w.grad();
  EXPECT_FALSE(g.defined());
  EXPECT_EMBER_ERROR(g.sum(), "undefined tensor", "x.grad() before backward");
}

}  // namespace
}  // namespace ember::testing
