// Shared by the tests/cuda_*.cpp files: what "the CUDA result matches the
// CPU one" means (dtype-aware tolerances, bitwise for copies), random CPU
// inputs for every dtype, and the skip when no device is present.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ember/cuda.h"
#include "ember/ember.h"
#include "test_util.h"

#define REQUIRE_CUDA() \
  if (!::ember::cuda_is_available()) GTEST_SKIP() << "no CUDA device"

namespace ember::cuda_testing {


inline const std::vector<DType> kEveryDType = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool};
inline const Device kCuda = Device::cuda();

inline std::string str(DType t) { return std::string(dtype_name(t)); }

// Random CPU values suited to the dtype: floats in [low, high), integers in
// [-20, 20) ([0, 20) for uint8), bools half true.
inline Tensor random_cpu(IntArrayRef sizes, DType dtype, double low = -4.0, double high = 4.0) {
  if (dtype == kBool) return randint(0, 2, sizes).to(kBool);
  if (is_integral(dtype)) return randint(dtype == kUInt8 ? 0 : -20, 20, sizes).to(dtype);
  return (rand(sizes, kFloat64) * (high - low) + low).to(dtype);
}

// Tolerances for CUDA vs CPU: both round once from float (or double), but
// transcendental functions may differ in their last bits.
struct Tol {
  double rtol, atol;
};
inline Tol tolerance(DType t) {
  switch (t) {
    case DType::Float32: return {2e-5, 2e-6};
    case DType::Float64: return {1e-12, 1e-13};
    case DType::Float16: return {4e-3, 1e-3};
    case DType::BFloat16: return {2e-2, 1e-2};
    default: return {0, 0};
  }
}

inline ::testing::AssertionResult matches(const Tensor& cuda_result, const Tensor& cpu_result) {
  if (!cuda_result.is_cuda()) return ::testing::AssertionFailure() << "result is on " << cuda_result.device();
  if (cuda_result.dtype() != cpu_result.dtype())
    return ::testing::AssertionFailure() << "dtype " << cuda_result.dtype() << " vs CPU " << cpu_result.dtype();
  const Tol tol = tolerance(cpu_result.dtype());
  return testing::all_close(cuda_result, cpu_result, tol.rtol, tol.atol);
}

inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  const Tensor x = a.cpu().contiguous(), y = b.cpu().contiguous();
  return x.dtype() == y.dtype() && x.sizes() == y.sizes() && std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

// Runs `f` on the CPU inputs and on their CUDA copies (0-d CPU tensors stay
// on the CPU: they are scalars); both must fail, or both succeed and match.
inline void check_op(const std::string& what, const std::function<Tensor(const std::vector<Tensor>&)>& f,
              const std::vector<Tensor>& cpu_inputs) {
  SCOPED_TRACE(what);
  std::vector<Tensor> cuda_inputs;
  for (const Tensor& t : cpu_inputs) cuda_inputs.push_back(t.dim() == 0 && t.impl()->is_wrapped_number() ? t : t.cuda());
  Tensor expected;
  try {
    expected = f(cpu_inputs);
  } catch (const Error& e) {
    EXPECT_THROW(f(cuda_inputs), Error) << "the CPU kernel refused (" << e.what() << ") but CUDA did not";
    return;
  }
  Tensor actual;
  try {
    actual = f(cuda_inputs);
  } catch (const Error& e) {
    ADD_FAILURE() << "CUDA failed: " << e.what();
    return;
  }
  EXPECT_TRUE(matches(actual, expected));
}

}  // namespace ember::cuda_testing
