// Comparing ember's outputs with torch's golden values (tests/golden_*.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::testing {

inline std::string index_str(int64_t flat, IntArrayRef sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    idx[d] = sizes[d] ? flat % sizes[d] : 0;
    flat = sizes[d] ? flat / sizes[d] : 0;
  }
  std::ostringstream os;
  os << IntArrayRef(idx);
  return os.str();
}

// Values of a tensor in row-major order, as T (double for floats, int64 otherwise).
template <class T>
std::vector<T> flat_values(const Tensor& t, DType as) {
  Tensor c = t.to(Device::cpu(), as).contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

// |actual - expected| <= atol + rtol * |expected|; NaN matches NaN; an
// infinity matches only itself; integer and bool outputs are exact.
inline ::testing::AssertionResult values_match(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  std::ostringstream bad;
  int64_t mismatches = 0;
  const int64_t n = expected.numel();
  constexpr int kShown = 8;
  if (is_floating_point(expected.dtype())) {
    const std::vector<double> a = flat_values<double>(actual, kFloat64), e = flat_values<double>(expected, kFloat64);
    for (int64_t i = 0; i < n; ++i) {
      const double x = a[static_cast<size_t>(i)], y = e[static_cast<size_t>(i)];
      const bool ok = (std::isnan(x) && std::isnan(y)) || x == y ||
                      (std::isfinite(x) && std::isfinite(y) && std::fabs(x - y) <= atol + rtol * std::fabs(y));
      if (!ok && mismatches++ < kShown) {
        bad << "\n  at " << index_str(i, expected.sizes()) << ": got " << std::setprecision(17) << x
            << ", torch " << y << " (|diff| " << std::fabs(x - y) << ", allowed " << atol + rtol * std::fabs(y) << ")";
      }
    }
  } else {
    const std::vector<int64_t> a = flat_values<int64_t>(actual, kInt64), e = flat_values<int64_t>(expected, kInt64);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t x = a[static_cast<size_t>(i)], y = e[static_cast<size_t>(i)];
      if (x != y && mismatches++ < kShown)
        bad << "\n  at " << index_str(i, expected.sizes()) << ": got " << x << ", torch " << y;
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches << " of " << n << " elements differ (rtol " << rtol << ", atol "
                                       << atol << ")" << bad.str() << (mismatches > kShown ? "\n  ..." : "");
}

}  // namespace ember::testing
