// SCAFFOLD: ember::nn::functional — conv1d, conv2d, conv_transpose2d.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::functional {}  // namespace ember::nn::functional
