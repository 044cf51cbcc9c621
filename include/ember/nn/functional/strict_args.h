// Parameter types that accept only the intended kind of value. They guard
// functions whose arguments a call written for another argument order would
// otherwise fill by silent conversion: `dropout(x, training)` would make a
// bool the probability, `scaled_dot_product_attention(q, k, v, mask, 0.1)`
// written for an order without dropout_p would make 0.1 a flag. With these,
// such calls do not compile.
#pragma once

#include <concepts>

namespace ember::nn::functional {

// A probability (or any real number): a float or a double, never a bool or an integer.
class Probability {
 public:
  template <std::floating_point T>
  Probability(T value) : value_(static_cast<double>(value)) {}  // NOLINT: implicit by design
  operator double() const { return value_; }                    // NOLINT

 private:
  double value_;
};

// A flag: a bool, never a number.
class Flag {
 public:
  template <std::same_as<bool> T>
  Flag(T value) : value_(value) {}          // NOLINT: implicit by design
  operator bool() const { return value_; }  // NOLINT

 private:
  bool value_;
};

}  // namespace ember::nn::functional
