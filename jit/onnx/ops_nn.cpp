// Layers as ONNX nodes: matrix products, convolution, pooling, batch and
// layer norm, softmax / log_softmax.
#include "ember/ops.h"
#include "jit/onnx/op_table.h"

namespace ember::onnx {
namespace {

// addmm(self, mat1, mat2, beta, alpha) = beta self + alpha mat1 mat2: Gemm.
void addmm(NodeExport& e) {
  const DType t = e.out_dtype();
  const double beta = e.float_arg(3), alpha = e.float_arg(4);
  std::vector<std::string> inputs = {e.in_as(1, t), e.in_as(2, t)};
  if (beta != 0.0) inputs.push_back(e.in_as(0, t));  // beta = 0 ignores self, NaNs included
  ::onnx::NodeProto& n = e.b.add("Gemm", inputs, {e.out()});
  attr_float(n, "alpha", alpha);
  attr_float(n, "beta", beta);
}

// mm, bmm, mv, dot: MatMul has numpy's rules, which cover all four.
void matmul(NodeExport& e) {
  const DType t = e.out_dtype();
  e.b.add("MatMul", {e.in_as(0, t), e.in_as(1, t)}, {e.out()});
}

// A per-spatial-dim list that ember allows as one value for all dims.
std::vector<int64_t> per_dim(const NodeExport& e, std::vector<int64_t> v, size_t spatial, int64_t fill,
                             const char* what) {
  if (v.empty()) v.assign(spatial, fill);
  if (v.size() == 1) v.assign(spatial, v[0]);
  if (v.size() != spatial)
    e.fail(std::string(what) + " has " + std::to_string(v.size()) + " entries for " + std::to_string(spatial) +
           " spatial dims");
  return v;
}

std::vector<int64_t> symmetric_pads(const std::vector<int64_t>& padding) {
  std::vector<int64_t> pads = padding;
  pads.insert(pads.end(), padding.begin(), padding.end());
  return pads;
}

// convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
void convolution(NodeExport& e) {
  const DType t = e.out_dtype();
  const jit::SymShape& w = e.value(1).shape;
  const size_t spatial = w.size() - 2;
  std::vector<int64_t> kernel;
  for (size_t d = 2; d < w.size(); ++d) kernel.push_back(w[d].offset);
  const bool transposed = e.bool_arg(6);
  std::vector<std::string> inputs = {e.in_as(0, t), e.in_as(1, t)};
  if (e.has(2)) inputs.push_back(e.in_as(2, t));
  ::onnx::NodeProto& n = e.b.add(transposed ? "ConvTranspose" : "Conv", inputs, {e.out()});
  attr_ints(n, "kernel_shape", kernel);
  attr_ints(n, "strides", per_dim(e, e.ints_arg(3), spatial, 1, "stride"));
  attr_ints(n, "pads", symmetric_pads(per_dim(e, e.ints_arg(4), spatial, 0, "padding")));
  attr_ints(n, "dilations", per_dim(e, e.ints_arg(5), spatial, 1, "dilation"));
  attr_int(n, "group", e.int_arg(8));
  if (transposed) attr_ints(n, "output_padding", per_dim(e, e.ints_arg(7), spatial, 0, "output_padding"));
}

// max_pool2d[_with_indices] / max_pool3d_with_indices(self, kernel_size,
// stride, padding, dilation, ceil_mode). ONNX numbers MaxPool's indices
// over the whole tensor where ember numbers them per plane: they must be unused.
void max_pool(NodeExport& e) {
  e.require_unused(1, "the indices");
  const size_t spatial = static_cast<size_t>(e.rank(0) - 2);
  const std::vector<int64_t> kernel = per_dim(e, e.ints_arg(1), spatial, 1, "kernel_size");
  std::vector<int64_t> stride = e.ints_arg(2);
  if (stride.empty()) stride = kernel;
  ::onnx::NodeProto& n = e.b.add("MaxPool", {e.in(0)}, {e.out()});
  attr_ints(n, "kernel_shape", kernel);
  attr_ints(n, "strides", per_dim(e, stride, spatial, 1, "stride"));
  attr_ints(n, "pads", symmetric_pads(per_dim(e, e.ints_arg(3), spatial, 0, "padding")));
  attr_ints(n, "dilations", per_dim(e, e.ints_arg(4), spatial, 1, "dilation"));
  attr_int(n, "ceil_mode", e.bool_arg(5) ? 1 : 0);
}

// avg_pool2d / avg_pool3d(self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
void avg_pool(NodeExport& e) {
  if (e.opt_int(6)) e.fail("divisor_override has no ONNX equivalent");
  const size_t spatial = static_cast<size_t>(e.rank(0) - 2);
  const std::vector<int64_t> kernel = per_dim(e, e.ints_arg(1), spatial, 1, "kernel_size");
  std::vector<int64_t> stride = e.ints_arg(2);
  if (stride.empty()) stride = kernel;
  ::onnx::NodeProto& n = e.b.add("AveragePool", {e.in(0)}, {e.out()});
  attr_ints(n, "kernel_shape", kernel);
  attr_ints(n, "strides", per_dim(e, stride, spatial, 1, "stride"));
  attr_ints(n, "pads", symmetric_pads(per_dim(e, e.ints_arg(3), spatial, 0, "padding")));
  attr_int(n, "ceil_mode", e.bool_arg(4) ? 1 : 0);
  attr_int(n, "count_include_pad", e.bool_arg(5) ? 1 : 0);
}

// adaptive_avg_pool2d / 3d(self, output_size): global pooling, or a plain
// average pool when every input size is a multiple of the output size.
void adaptive_avg_pool(NodeExport& e) {
  const jit::SymShape& in = e.value(0).shape;
  const size_t spatial = in.size() - 2;
  const std::vector<int64_t> out = per_dim(e, e.ints_arg(1), spatial, 1, "output_size");
  bool global = true;
  std::vector<int64_t> kernel;
  for (size_t d = 0; d < spatial; ++d) {
    const jit::SymDim& size = in[d + 2];
    global = global && out[d] == 1;
    if (!size.is_static() || out[d] <= 0 || size.offset % out[d] != 0) {
      kernel.clear();
      break;
    }
    kernel.push_back(size.offset / out[d]);
  }
  if (global) {
    e.b.add("GlobalAveragePool", {e.in(0)}, {e.out()});
    return;
  }
  if (kernel.size() != spatial) e.fail("an input size is not a multiple of the output size");
  ::onnx::NodeProto& n = e.b.add("AveragePool", {e.in(0)}, {e.out()});
  attr_ints(n, "kernel_shape", kernel);
  attr_ints(n, "strides", kernel);
}

// A tensor input of a norm, or `fill` of `shape` when it is None.
std::string affine(NodeExport& e, size_t i, DType t, std::vector<int64_t> shape, double fill, const char* what) {
  if (e.has(i)) return e.in_as(i, t);
  const std::string name = e.tmp(what);
  e.b.initializer(full(shape, fill, TensorOptions(t)), name);
  return name;
}

// batch_norm(input, weight?, bias?, running_mean?, running_var?, training, momentum, eps), eval mode.
void batch_norm(NodeExport& e) {
  if (e.bool_arg(5))
    e.fail("batch norm in training mode (batch statistics) has no inference equivalent; trace the module after eval()");
  if (!e.has(3) || !e.has(4)) e.fail("batch norm without running statistics normalises with batch statistics");
  e.require_unused(1, "the batch mean");
  e.require_unused(2, "the batch rstd");
  const DType t = e.out_dtype();
  const jit::SymDim channels = e.value(0).shape.at(1);
  const std::vector<int64_t> c = {channels.offset};
  const std::string scale = affine(e, 1, t, c, 1.0, "weight"), bias = affine(e, 2, t, c, 0.0, "bias");
  ::onnx::NodeProto& n =
      e.b.add("BatchNormalization", {e.in_as(0, t), scale, bias, e.in_as(3, t), e.in_as(4, t)}, {e.out()});
  attr_float(n, "epsilon", e.float_arg(7));
}

// layer_norm(input, normalized_shape, weight?, bias?, eps) -> (output, mean, rstd);
// mean and rstd are for the backward and must be unused.
void layer_norm(NodeExport& e) {
  e.require_unused(1, "the mean");
  e.require_unused(2, "the rstd");
  const DType t = e.out_dtype();
  const std::vector<int64_t> normalized = e.ints_arg(1);
  const int64_t axis = e.rank(0) - static_cast<int64_t>(normalized.size());
  std::vector<std::string> inputs = {e.in_as(0, t), affine(e, 2, t, normalized, 1.0, "weight")};
  if (e.has(3)) inputs.push_back(e.in_as(3, t));
  ::onnx::NodeProto& n = e.b.add("LayerNormalization", inputs, {e.out()});
  attr_int(n, "axis", axis);
  attr_float(n, "epsilon", e.float_arg(4));
}

// softmax / log_softmax(self, dim, dtype?)
void softmax(NodeExport& e) {
  const std::string op = e.node.name() == "softmax" ? "Softmax" : "LogSoftmax";
  attr_int(e.b.add(op, {e.in_as(0, e.out_dtype())}, {e.out()}), "axis", e.axis(e.int_arg(1), e.rank(0)));
}

}  // namespace

void add_nn_ops(OpTable& table) {
  table["addmm"] = addmm;
  for (const char* name : {"mm", "bmm", "mv", "dot"}) table[name] = matmul;
  table["convolution"] = convolution;
  for (const char* name : {"max_pool2d", "max_pool2d_with_indices", "max_pool3d_with_indices"}) table[name] = max_pool;
  table["avg_pool2d"] = avg_pool;
  table["avg_pool3d"] = avg_pool;
  table["adaptive_avg_pool2d"] = adaptive_avg_pool;
  table["adaptive_avg_pool3d"] = adaptive_avg_pool;
  table["batch_norm"] = batch_norm;
  table["layer_norm"] = layer_norm;
  table["softmax"] = softmax;
  table["log_softmax"] = softmax;
}

}  // namespace ember::onnx
