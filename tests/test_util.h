// Helpers shared by the tests: reading values out of tensors and comparing.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::testing {

// Sets the intra-op thread count for a scope and restores it at the end;
// default-constructed, it only restores (for a test that changes it freely).
class ThreadCount {
 public:
  ThreadCount() : saved_(get_num_threads()) {}
  explicit ThreadCount(int n) : ThreadCount() { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

// All values of a tensor (any layout, any device) as doubles, in row-major order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(Device::cpu(), DType::Float64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// |a - e| <= atol + rtol * |e| elementwise; NaN matches NaN; infinities match exactly.
inline ::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol = 1e-5,
                                            double atol = 1e-8) {
  if (actual.sizes() != expected.sizes()) {
    std::ostringstream os;
    os << "shape " << actual.sizes() << " vs expected " << expected.sizes();
    return ::testing::AssertionFailure() << os.str();
  }
  const std::vector<double> a = values(actual), e = values(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    const bool ok = (std::isnan(a[i]) && std::isnan(e[i])) ||
                    (std::isinf(e[i]) ? a[i] == e[i] : std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i]));
    if (!ok) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs expected " << e[i]
                                           << " (rtol " << rtol << ", atol " << atol << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Expects `stmt` to throw ember::Error whose message contains every one of `parts`.
#define EXPECT_EMBER_ERROR(stmt, ...)                                                         \
  do {                                                                                        \
    try {                                                                                     \
      stmt;                                                                                   \
      ADD_FAILURE() << "expected ember::Error from " #stmt;                                   \
    } catch (const ::ember::Error& e) {                                                       \
      for (const char* part : {__VA_ARGS__})                                                  \
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)                        \
            << "message '" << e.what() << "' lacks '" << part << "'";                         \
    }                                                                                         \
  } while (0)

}  // namespace ember::testing
