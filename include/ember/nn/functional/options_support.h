// What the options forms of the F:: functions share.
//
// Note [Options forms]
// Each F:: function has Python's positional form and, where libtorch has
// one, libtorch's options form: F::conv2d(x, w, F::Conv2dFuncOptions().stride(2)).
// The options form is a template constrained to its exact options type
// (`template <std::same_as<Conv2dFuncOptions> Options>`), never a plain
// overload: a template parameter is not deduced from a braced list or
// reached by a conversion, so `F::max_pool2d(x, {2})` and `F::conv2d(x, w, {})`
// stay positional calls instead of becoming ambiguous, and no value
// converts into an options object. Each options form is a one-line mapping
// onto the positional form, in the header, so both compute the same thing.
#pragma once

#include <optional>

#include "ember/tensor.h"

namespace ember::nn::detail {

// An options tensor (undefined when not set) as the std::optional the positional forms take.
inline std::optional<Tensor> optional_tensor(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

}  // namespace ember::nn::detail
