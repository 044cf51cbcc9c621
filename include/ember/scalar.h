// Scalar: a number passed to an op (alpha, a fill value, a clamp bound).
// It keeps its category (bool, integer, floating) because type promotion
// treats `int_tensor + 2` and `int_tensor + 2.5` differently, as PyTorch does.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "ember/dtype.h"
#include "ember/error.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { i_ = v; }  // NOLINT: implicit, as numbers are
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) {  // NOLINT
    i_ = static_cast<int64_t>(v);
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float) {  // NOLINT
    d_ = static_cast<double>(v);
  }
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}          // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}      // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  // The value as a T: a plain cast (int64 300 -> uint8 gives 44), except that
  // a floating value becomes an integer only when its truncation fits int64:
  // NaN, ±inf or 1e30 -> int raises an ember::Error (the cast would be
  // undefined). Ops that put a Scalar into a tensor check the target dtype's
  // range first (core/scalar_convert.h).
  template <class T>
  T to() const {
    if (kind_ == Kind::Float) {
      if constexpr (std::is_same_v<T, bool>) {
        return d_ != 0.0;
      } else if constexpr (std::is_integral_v<T>) {
        // -2^63 <= trunc(d) < 2^63; false for NaN.
        EMBER_CHECK(d_ >= -0x1p63 && d_ < 0x1p63, "Scalar::to: ", d_,
                    " cannot be converted to an integer without overflow");
        return static_cast<T>(static_cast<int64_t>(d_));
      } else {
        return static_cast<T>(d_);
      }
    }
    if constexpr (std::is_same_v<T, bool>) return i_ != 0;
    else return static_cast<T>(i_);
  }
  double to_double() const { return to<double>(); }
  int64_t to_int() const { return to<int64_t>(); }

  // The dtype a tensor made from this scalar gets by default (torch.tensor(2.5) is float32).
  DType default_dtype() const {
    return kind_ == Kind::Float ? DType::Float32 : kind_ == Kind::Int ? DType::Int64 : DType::Bool;
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace ember
