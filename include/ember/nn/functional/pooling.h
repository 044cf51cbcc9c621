// SCAFFOLD: ember::nn::functional — max_pool2d, avg_pool2d, adaptive_avg_pool2d, pad, interpolate.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::functional {}  // namespace ember::nn::functional
