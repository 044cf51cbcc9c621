// Argument checks and shape handling shared by the loss kernels and by the
// composite losses of nn/functional_loss.cpp, so the functional and the
// dispatcher (boxed) paths raise the same errors.
#pragma once

#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::loss {

enum class Reduction : uint8_t { None, Mean, Sum };

// "none" | "mean" | "sum"; anything else is an error naming `op`.
Reduction parse_reduction(std::string_view reduction, const char* op);

// A class-index loss's input seen as rows: `self` (N, C, d...) or (C) with a
// target (N, d...) or (); the class dim moved last.
struct ClassRows {
  int64_t rows = 0;     // M = N * prod(d), or 1 unbatched
  int64_t classes = 0;  // C
  int64_t inner = 1;    // prod(d): the stride of the class dim in a contiguous self
};

// Checks self (floating, (N, C, d...) or (C)), target (int64, (N, d...) or
// ()) and weight (undefined or (C,)); returns the geometry. Errors name `op`.
ClassRows check_class_target(const char* op, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight);

// The per-class weights as doubles (ones when undefined).
std::vector<double> class_weights(const std::optional<Tensor>& weight, int64_t classes);

// The targets (contiguous int64, rows of them) checked against [0, C) unless
// equal to ignore_index; returns the sum of the weights of the kept targets.
double checked_target_weight(const char* op, const int64_t* target, int64_t rows, int64_t classes,
                             int64_t ignore_index, const std::vector<double>& weights);

}  // namespace ember::loss
