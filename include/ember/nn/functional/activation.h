// SCAFFOLD: ember::nn::functional — leaky_relu, elu, hardswish, hardsigmoid, mish, log_sigmoid.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::functional {}  // namespace ember::nn::functional
