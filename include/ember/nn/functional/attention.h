// SCAFFOLD: ember::nn::functional — scaled_dot_product_attention.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::functional {}  // namespace ember::nn::functional
