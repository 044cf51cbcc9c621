// Golden tests of the neural-network ops: forward values and gradients
// against PyTorch. The linear-algebra ops use the same format and runner.
//
// tests/golden/nn/<family>.safetensors (written by tools/golden/make_nn_golden.py)
// and tests/golden/linalg/linalg.safetensors (tools/golden/make_linalg_golden.py)
// hold, per case NAME: inputs NAME.in0, NAME.in1, ...; torch's outputs
// NAME.out0, ...; for a case with gradients, a cotangent NAME.cotK for each
// floating output K and torch's gradient NAME.gradJ of
// sum_K sum(outK * cotK) with respect to each input J listed in "grads".
// The metadata maps NAME to {"op", "args", "grads", "rtol", "atol",
// "grad_rtol", "grad_atol"}.
//
// Each family registers how ember runs its ops (tests/golden_nn_<family>.cpp,
// tests/golden_linalg.cpp):
//
//   const bool registered = register_golden_nn_op("conv2d", [](const TensorList& in, const nlohmann::json& args) {
//     return TensorList{F::conv2d(in[0], in[1], ...)};
//   });
//
// The runner (tests/golden_nn.cpp) makes one test per case; a case whose op
// has no registered runner fails.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ember/ember.h"

namespace ember::testing {

using GoldenNnRun = std::function<TensorList(const TensorList& inputs, const nlohmann::json& args)>;

// Call during static initialisation (see above); returns true.
bool register_golden_nn_op(const std::string& op, GoldenNnRun run);

// Reading "args": an absent or null argument takes the fallback.
int64_t int_arg(const nlohmann::json& args, const char* name, int64_t fallback);
double float_arg(const nlohmann::json& args, const char* name, double fallback);
bool bool_arg(const nlohmann::json& args, const char* name, bool fallback);
std::string str_arg(const nlohmann::json& args, const char* name, const std::string& fallback);
std::vector<int64_t> ints_arg(const nlohmann::json& args, const char* name, std::vector<int64_t> fallback);

}  // namespace ember::testing
