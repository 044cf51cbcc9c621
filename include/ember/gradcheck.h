// Gradient checking: compares the gradients autograd computes with finite
// differences.
//
//   using namespace ember;
//   Tensor x = randn({3, 4}, kFloat64).requires_grad_();
//   auto fn = [](const TensorList& in) { return TensorList{in[0].tanh() * in[0]}; };
//   autograd::GradcheckResult r = autograd::gradcheck(fn, {x});
//   if (!r) std::cerr << r.report;   // names the worst element
//
// Note [How gradcheck works]
// For each input that requires grad and each floating output, gradcheck
// builds two Jacobians d output / d input:
//   numerical   column by column: every element of the input is moved by
//               +eps and -eps in place, and (f(x + eps) - f(x - eps)) / 2eps
//               is read from the outputs (central differences, in f64);
//   analytical  row by row: autograd::grad of the output with a one-hot
//               grad_output (retain_graph), as backward would propagate it.
// They must agree element by element: |analytical - numerical| <= atol +
// rtol * |numerical|. The report names the worst element (output, input,
// their element indices, both values, the allowed difference).
//
// Inputs that require grad must be Float64 CPU tensors whose elements do not
// share memory (no expanded inputs): perturbing one element must move one
// element. Call it at points where `fn` is differentiable: kinks (relu at 0),
// ties (maximum of equal values) and non-finite values make the finite
// differences meaningless.
//
// gradgradcheck checks second derivatives the same way: it runs gradcheck
// on x, v -> autograd::grad(fn(x), x, v, create_graph=true), with v fixed
// random (seeded) grad_outputs that are checked as inputs too (as PyTorch does).
#pragma once

#include <functional>
#include <string>

#include "ember/tensor.h"

namespace ember::autograd {

struct GradcheckOptions {
  double eps = 1e-6;   // the finite-difference step
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = false;
  std::string report;  // what was checked, or the worst mismatch
  explicit operator bool() const { return ok; }
};

using GradcheckFunction = std::function<TensorList(const TensorList&)>;

// Checks d fn(inputs) / d inputs for every input that requires grad. Raises
// an ember::Error for unusable arguments (no input requires grad, an input
// that is not Float64 or not on the CPU, overlapping memory); a wrong
// gradient is a result with ok == false. Errors raised by fn or by backward
// (an op without a derivative formula) propagate.
GradcheckResult gradcheck(const GradcheckFunction& fn, const TensorList& inputs, const GradcheckOptions& options = {});

// Checks the second derivatives of fn (see the Note above). The report counts
// inputs as [fn's inputs..., one grad_output per differentiable output of fn]
// and outputs as the first derivatives w.r.t. fn's inputs that require grad.
GradcheckResult gradgradcheck(const GradcheckFunction& fn, const TensorList& inputs,
                              const GradcheckOptions& options = {});

}  // namespace ember::autograd
