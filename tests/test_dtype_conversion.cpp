// Floating to integer conversion (Note [Float to integer conversion] in
// core/float_to_int.h): the rule itself, and copy_ / to() following it on
// every path (contiguous blocks, the element-by-element fallback, strided and
// broadcast runs) for float16, bfloat16, float32 and float64 sources.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/float_to_int.h"
#include "core/tensor_iterator.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::values;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr double k2p31 = 2147483648.0;
constexpr double k2p63 = 9223372036854775808.0;

// An integer tensor's values, exactly (values() goes through double).
std::vector<int64_t> ints(const Tensor& t) {
  const Tensor c = t.to(DType::Int64).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// A float64 tensor of the given values, converted to `dtype` (so each value
// is rounded to what `dtype` holds: 1e30 is +inf in float16).
Tensor source(const std::vector<double>& v, DType dtype) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t.to(dtype);
}

// What the rule gives for each element of the floating tensor `src` converted to `to`.
std::vector<int64_t> by_rule(const Tensor& src, DType to) {
  std::vector<int64_t> out;
  for (double x : values(src)) {  // float16, bfloat16 and float32 widen to double exactly
    switch (to) {
      case DType::Int32: out.push_back(float_to_int<int32_t>(x)); break;
      case DType::Int64: out.push_back(float_to_int<int64_t>(x)); break;
      case DType::UInt8: out.push_back(float_to_int<uint8_t>(x)); break;
      case DType::Bool: out.push_back(x != 0.0); break;
      default: ADD_FAILURE() << "not an integer dtype: " << to;
    }
  }
  return out;
}

// ---- the rule ----

TEST(FloatToInt, TruncatesTowardZeroInRange) {
  EXPECT_EQ(float_to_int<int32_t>(-1.5), -1);
  EXPECT_EQ(float_to_int<int32_t>(-0.5f), 0);
  EXPECT_EQ(float_to_int<int32_t>(-0.0), 0);
  EXPECT_EQ(float_to_int<int32_t>(2.999f), 2);
  EXPECT_EQ(float_to_int<int64_t>(-2.7), -2);
  EXPECT_EQ(float_to_int<int64_t>(1e18), 1000000000000000000);
  EXPECT_EQ(float_to_int<int64_t>(4294967296.5), 4294967296);
}

TEST(FloatToInt, NaNIsZero) {
  EXPECT_EQ(float_to_int<int32_t>(kNaN), 0);
  EXPECT_EQ(float_to_int<int32_t>(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(float_to_int<int64_t>(-kNaN), 0);
  EXPECT_EQ(float_to_int<uint8_t>(kNaN), 0);
}

TEST(FloatToInt, SaturatesBeyondTheRange) {
  for (double big : {kInf, 1e30, k2p63, k2p31}) {
    EXPECT_EQ(float_to_int<int32_t>(big), kI32Max) << big;
    EXPECT_EQ(float_to_int<int32_t>(static_cast<float>(big)), kI32Max) << big;
    EXPECT_EQ(float_to_int<int32_t>(-big), kI32Min) << big;
    EXPECT_EQ(float_to_int<int32_t>(static_cast<float>(-big)), kI32Min) << big;
  }
  for (double big : {kInf, 1e30, k2p63}) {
    EXPECT_EQ(float_to_int<int64_t>(big), kI64Max) << big;
    EXPECT_EQ(float_to_int<int64_t>(static_cast<float>(big)), kI64Max) << big;
    EXPECT_EQ(float_to_int<int64_t>(-big), kI64Min) << big;
    EXPECT_EQ(float_to_int<int64_t>(static_cast<float>(-big)), kI64Min) << big;
  }
  EXPECT_EQ(float_to_int<int64_t>(k2p31), 2147483648);
}

TEST(FloatToInt, ExactAtTheLimits) {
  EXPECT_EQ(float_to_int<int32_t>(2147483647.0), kI32Max);
  EXPECT_EQ(float_to_int<int32_t>(2147483647.9), kI32Max);
  EXPECT_EQ(float_to_int<int32_t>(-2147483648.0), kI32Min);
  EXPECT_EQ(float_to_int<int32_t>(-2147483648.9), kI32Min);
  EXPECT_EQ(float_to_int<int32_t>(-2147483649.0), kI32Min);
  EXPECT_EQ(float_to_int<int32_t>(2147483520.0f), 2147483520);  // the largest float below 2^31
  EXPECT_EQ(float_to_int<int32_t>(-2147483648.0f), kI32Min);
  EXPECT_EQ(float_to_int<int64_t>(9223371487098961920.0f), 9223371487098961920);  // the largest float below 2^63
  EXPECT_EQ(float_to_int<int64_t>(9223372036854774784.0), 9223372036854774784);   // the largest double below 2^63
  EXPECT_EQ(float_to_int<int64_t>(-k2p63), kI64Min);
  EXPECT_EQ(float_to_int<int64_t>(static_cast<float>(-k2p63)), kI64Min);
}

TEST(FloatToInt, UInt8WrapsTheInt64Result) {
  EXPECT_EQ(float_to_int<uint8_t>(-1.0), 255);
  EXPECT_EQ(float_to_int<uint8_t>(-1.5f), 255);
  EXPECT_EQ(float_to_int<uint8_t>(-0.5), 0);
  EXPECT_EQ(float_to_int<uint8_t>(256.0), 0);
  EXPECT_EQ(float_to_int<uint8_t>(257.9), 1);
  EXPECT_EQ(float_to_int<uint8_t>(-300.7), 212);
  EXPECT_EQ(float_to_int<uint8_t>(3000000001.0), 1);  // beyond int32, inside int64
  EXPECT_EQ(float_to_int<uint8_t>(kInf), 255);        // int64 max
  EXPECT_EQ(float_to_int<uint8_t>(1e30f), 255);
  EXPECT_EQ(float_to_int<uint8_t>(-kInf), 0);         // int64 min
  EXPECT_EQ(float_to_int<uint8_t>(-1e30), 0);
}

// ---- copy_ and to() ----

// PyTorch 1.13's results for in-range values (torch.tensor(v).to(dtype), from
// float32, float64, float16 and bfloat16 alike): in range the rule is C++'s cast.
TEST(DTypeConversion, InRangeValuesMatchPyTorch) {
  const std::vector<double> v = {-1.5, -0.5, 0.5, 1.5,  2.7, -2.7,   -1, -255,
                                 -256, 255,  256, 300, -300.7, 127.9, 0, -0.0};
  const std::vector<int64_t> as_int = {-1, 0, 0, 1, 2, -2, -1, -255, -256, 255, 256, 300, -300, 127, 0, 0};
  const std::vector<int64_t> as_u8 = {255, 0, 0, 1, 2, 254, 255, 1, 0, 255, 0, 44, 212, 127, 0, 0};
  const std::vector<int64_t> as_bool = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const Tensor x = source(v, from);
    std::vector<int64_t> i = as_int, u = as_u8;
    if (from == kBFloat16) i[13] = u[13] = 128;  // 127.9 is 128 in bfloat16
    EXPECT_EQ(ints(x.to(kInt32)), i) << from;
    EXPECT_EQ(ints(x.to(kInt64)), i) << from;
    EXPECT_EQ(ints(x.to(kUInt8)), u) << from;
    EXPECT_EQ(ints(x.to(kBool)), as_bool) << from;
  }
  // Larger float32 values, also checked against PyTorch.
  const Tensor big = source({2147483520.0, -2147483648.0, 1e9, -1e9}, kFloat32);
  EXPECT_EQ(ints(big.to(kInt32)), (std::vector<int64_t>{2147483520, kI32Min, 1000000000, -1000000000}));
  EXPECT_EQ(ints(big.to(kInt64)), (std::vector<int64_t>{2147483520, -2147483648, 1000000000, -1000000000}));
  EXPECT_EQ(ints(big.to(kUInt8)), (std::vector<int64_t>{128, 0, 0, 0}));
}

TEST(DTypeConversion, SpecialValuesConvertByTheRule) {
  // 125 copies of 8 values: 1000 elements, over the contiguous block path.
  const std::vector<double> v8 = {kNaN, kInf, -kInf, 1e30, -1e30, -1.5, k2p31, k2p63};
  std::vector<double> v;
  for (int k = 0; k < 125; ++k) v.insert(v.end(), v8.begin(), v8.end());
  auto repeat = [](std::vector<int64_t> e8) {
    std::vector<int64_t> e;
    for (int k = 0; k < 125; ++k) e.insert(e.end(), e8.begin(), e8.end());
    return e;
  };
  const Tensor x = source(v, kFloat32);
  EXPECT_EQ(ints(x.to(kInt32)), repeat({0, kI32Max, kI32Min, kI32Max, kI32Min, -1, kI32Max, kI32Max}));
  EXPECT_EQ(ints(x.to(kInt64)), repeat({0, kI64Max, kI64Min, kI64Max, kI64Min, -1, 2147483648, kI64Max}));
  EXPECT_EQ(ints(x.to(kUInt8)), repeat({0, 255, 0, 255, 0, 255, 0, 255}));
  EXPECT_EQ(ints(x.to(kBool)), repeat({1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(ints(source(v, kFloat64).to(kInt64)), ints(x.to(kInt64)));
  // float16 holds neither 1e30 nor 2^31: they are +inf there.
  EXPECT_EQ(ints(source(v, kFloat16).to(kInt32)),
            repeat({0, kI32Max, kI32Min, kI32Max, kI32Min, -1, kI32Max, kI32Max}));
  EXPECT_EQ(ints(source(v, kBFloat16).to(kInt64)),
            repeat({0, kI64Max, kI64Min, kI64Max, kI64Min, -1, 2147483648, kI64Max}));
}

// The special values, each followed by in-range ones, repeated to `n`
// elements: several 512-element blocks of the contiguous path, some all in
// range (the plain cast), some with a value beyond int32 but inside int64,
// some with NaN or infinities (the rule element by element).
std::vector<double> mixed_values(int64_t n) {
  const std::vector<double> special = {kNaN, kInf, -kInf, 1e30, -1e30, -1.5, -0.5, k2p31, -k2p31, k2p63, -k2p63,
                                       2147483647.0, -2147483649.0, 65504.0, -65504.0, 3e9, -3e9, 1e18};
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::fmod(static_cast<double>(i) * 0.73, 600.0) - 300.0;
  // The first 1024 elements stay in range (two plain-cast blocks); specials follow.
  for (size_t k = 0; k < special.size(); ++k) v[1024 + 130 * k] = special[k];  // even: kept by [::2]
  v[v.size() - 1] = kNaN;  // in the tail block
  return v;
}

TEST(DTypeConversion, EverySourceAndTargetFollowsTheRule) {
  const std::vector<double> v = mixed_values(4000);
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const Tensor x = source(v, from);
    for (DType to : {kInt32, kInt64, kUInt8, kBool}) {
      const std::vector<int64_t> expected = by_rule(x, to);
      EXPECT_EQ(ints(x.to(to)), expected) << from << " -> " << to << ", contiguous";
      Tensor out = empty({4000}, to);
      out.copy_(x);
      EXPECT_EQ(ints(out), expected) << from << " -> " << to << ", copy_";
    }
  }
}

TEST(DTypeConversion, StridedAndBroadcastRunsFollowTheRule) {
  const std::vector<double> v = mixed_values(4000);
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const Tensor x = source(v, from);
    const Tensor every_other = x.slice(0, 0, 4000, 2);  // (2000,), stride 2
    for (DType to : {kInt32, kInt64, kUInt8, kBool}) {
      const std::vector<int64_t> expected = by_rule(every_other, to);
      EXPECT_EQ(ints(every_other.to(to)), expected) << from << " -> " << to << ", strided source";
      Tensor wide = zeros({4000}, to);
      wide.slice(0, 0, 4000, 2).copy_(every_other.contiguous());
      EXPECT_EQ(ints(wide.slice(0, 0, 4000, 2)), expected) << from << " -> " << to << ", strided destination";
      // A transposing copy into a contiguous tensor takes the tiled path.
      const Tensor square = x.slice(0, 0, 3600).view({60, 60});
      Tensor transposed = empty({60, 60}, to);
      transposed.copy_(square.t());
      EXPECT_EQ(ints(transposed), by_rule(square.t().contiguous(), to)) << from << " -> " << to << ", transposed";
    }
    for (double special : {kNaN, kInf, -kInf, -1.5}) {
      const Tensor one = source({special}, from).view({});
      Tensor out = empty({1000}, kInt64);
      out.copy_(one);  // broadcast: stride 0
      EXPECT_EQ(ints(out), std::vector<int64_t>(1000, by_rule(one.view({1}), kInt64)[0])) << from << " " << special;
    }
  }
}

// A 0-d CPU tensor converted by TensorIterator to a forced integer common
// dtype (no dispatched copy) follows the same rule.
TEST(DTypeConversion, ZeroDimOperandConvertedByTheIteratorFollowsTheRule) {
  for (double special : {kNaN, kInf, -kInf, -1.5, 1e30}) {
    TensorIterator::Config c;
    c.name("test").input(scalar_tensor(special, kFloat64));
    c.common_dtype = DType::Int64;
    const TensorIterator it = TensorIterator::build(std::move(c));
    EXPECT_EQ(*it.operand(1).data_ptr<int64_t>(), float_to_int<int64_t>(special)) << special;
  }
}

}  // namespace
}  // namespace ember
