// SCAFFOLD: ember::nn::functional — batch_norm, layer_norm, group_norm, rms_norm, softmax, log_softmax.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::functional {}  // namespace ember::nn::functional
