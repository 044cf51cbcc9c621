// Floating to integer conversion on the device follows the CPU's rule (Note
// [Float to integer conversion] in core/float_to_int.h) bit for bit, for
// NaN, infinities and values beyond the target's range too. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "cuda_test_util.h"
#include "ember/cuda.h"
#include "ember/ember.h"

namespace ember {
namespace {

// An integer tensor's values, exactly.
std::vector<int64_t> ints(const Tensor& t) {
  const Tensor c = t.to(Device::cpu(), DType::Int64).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// 3000 in-range values with the special ones spread through them.
Tensor mixed_values() {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::vector<double> special = {kNaN, kInf, -kInf, 1e30, -1e30, -1.5, -0.5, 2147483648.0, -2147483649.0,
                                       9223372036854775808.0, -9223372036854775808.0, 3e9, -3e9, 1e18};
  Tensor t = empty({3000}, kFloat64);
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < 3000; ++i) p[i] = std::fmod(static_cast<double>(i) * 0.73, 600.0) - 300.0;
  for (size_t k = 0; k < special.size(); ++k) p[600 + 150 * k] = special[k];
  return t;
}

TEST(CudaDTypeConversion, FloatToIntegerMatchesTheCpu) {
  REQUIRE_CUDA();
  const Tensor v = mixed_values();
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const Tensor x = v.to(from);
    const Tensor dx = x.to(Device::cuda());
    for (DType to : {kInt32, kInt64, kUInt8, kBool}) {
      EXPECT_EQ(ints(dx.to(to)), ints(x.to(to))) << from << " -> " << to;
      const Tensor strided = dx.slice(0, 0, 3000, 2);  // a strided device source
      EXPECT_EQ(ints(strided.to(to)), ints(x.slice(0, 0, 3000, 2).to(to))) << from << " -> " << to << ", strided";
    }
  }
}

}  // namespace
}  // namespace ember
