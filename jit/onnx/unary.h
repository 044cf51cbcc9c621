// The unary math ops and activations as ONNX nodes, shared by the op table
// (ops_elementwise.cpp) and the fused elementwise programs (ops_fused.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jit/onnx/builder.h"

namespace ember::onnx {

// Where one op's nodes go: its result is named `out`, the values on the way
// `<stem>/<what>`, and everything computes in `dtype`.
struct UnaryEmit {
  ModelBuilder& b;
  std::string out;
  std::string stem;
  DType dtype;

  std::string tmp(const std::string& what) const { return b.fresh(stem + "/" + what); }
  std::string number(double v) const { return b.scalar(v, dtype); }
};

// The parameters some ops take; the defaults are ember's.
struct UnaryParams {
  double alpha = 1.0;                 // elu
  double slope = 0.01;                // leaky_relu
  double beta = 1.0, threshold = 20;  // softplus
  std::optional<double> lo, hi;       // clamp
  std::string approximate = "none";   // gelu: none or tanh
};

// Emits ember op `name` (exp, gelu, clamp, ...) on `x`; false when it is not
// one of these ops. An unknown gelu approximation is an ember::Error.
bool emit_unary(const UnaryEmit& e, const std::string& name, const std::string& x, const UnaryParams& p = {});

// The names emit_unary knows.
const std::vector<std::string>& unary_names();

}  // namespace ember::onnx
