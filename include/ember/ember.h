// ember: a tensor and autograd engine in C++20.
//
//   #include <ember/ember.h>
//   ember::Tensor a = ember::randn({2, 3});
//   ember::Tensor b = (a * 2 + 1).relu().sum();
//   std::cout << b << "\n";
//
// Only this header is needed; it pulls in no Eigen or CUDA headers. It
// brings <cmath> too (INFINITY, std::isfinite), as <torch/torch.h> does.
#pragma once

#include <cmath>

#include "ember/accessor.h"
#include "ember/allocator.h"
#include "ember/amp.h"
#include "ember/autograd.h"
#include "ember/activation_checkpoint.h"
#include "ember/custom_function.h"
#include "ember/cuda.h"
#include "ember/data.h"
#include "ember/device.h"
#include "ember/distributed.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/generator.h"
#include "ember/gradcheck.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn.h"
#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ember/optim.h"
#include "ember/parallel.h"
#include "ember/scalar.h"
#include "ember/serialize.h"
#include "ember/tensor.h"
#include "ember/training_checkpoint.h"
#include "ember/version.h"
