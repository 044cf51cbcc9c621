// SCAFFOLD: ember::nn::functional — losses, embedding, dropout, linear.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::functional {}  // namespace ember::nn::functional
