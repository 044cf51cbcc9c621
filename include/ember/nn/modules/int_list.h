// Int-list options of the layers (kernel_size, stride, ...): one value for
// every spatial dim or one value per dim, stored as one value per dim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/array_ref.h"

namespace ember::nn::detail {

// `values` (1 value, repeated, or `dims` values) as `dims` values; anything
// else is an ember::Error naming `layer` and `what`.
// (Defined in nn/modules_conv.cpp.)
std::vector<int64_t> per_dim(const std::string& layer, const char* what, IntArrayRef values, size_t dims);

}  // namespace ember::nn::detail
