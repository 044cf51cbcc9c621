// The op table of `ember bench` (Note [How ember bench measures], step 1):
// per op, its arguments from a shape, its default shapes (small, medium,
// large, and awkward ones: odd sizes, 1-sized dims) and its flop/byte model.
//
// The model counts, for one call:
// - flops: the arithmetic of the textbook algorithm, one per add, multiply,
//   compare or exp (an FMA is two); what each op counts is by its row;
// - bytes: compulsory traffic, each input read once and each output written
//   once, at the dtype's width. Kernels that read an input twice (two-pass
//   norms) or spill to memory move more, which shows as a lower % of roof.
#include <array>
#include <string>
#include <tuple>
#include <utility>

#include "core/op_decls.h"
#include "core/op_decls_attention.h"
#include "core/op_decls_conv.h"
#include "core/op_decls_norm.h"
#include "core/op_decls_pooling.h"
#include "ember/error.h"
#include "ember/generator.h"
#include "ember/ops.h"
#include "tools/ember/bench.h"

namespace ember::cli::bench {
namespace {

using Dims = std::vector<int64_t>;

// Calls a typed op with the arguments of a boxed stack (no boxing on the
// timed path); returns output 0.
template <class R, class... A>
Tensor call_typed(const TypedOp<R(A...)>& op, Stack& s) {
  auto result = [&]<size_t... I>(std::index_sequence<I...>) {
    return op.call(boxing::Unbox<A>::get(s[I])...);
  }(std::index_sequence_for<A...>{});
  if constexpr (std::is_same_v<R, Tensor>) return result;
  else return std::get<0>(result);
}
template <auto& Op>
Tensor call_op(Stack& s) {
  return call_typed(Op, s);
}

// Inputs are N(0, 1) from a fixed seed: every run and every side (ember, the
// reference, libtorch's shapes) sees the same values for the same shape.
IValue input(const Dims& sizes, TensorOptions options, Generator& gen) {
  return boxing::box(randn(sizes, options.device(Device::cpu()), &gen).to(options.device_));
}
IValue ints(Dims v) { return IValue::Payload(std::move(v)); }
IValue scalar(double v) { return IValue::Payload(Scalar(v)); }

double product(const Dims& d) {
  double p = 1;
  for (int64_t v : d) p *= static_cast<double>(v);
  return p;
}
double nchw(const Dims& d) { return 1.0 * d[0] * d[1] * d[2] * d[3]; }  // an image batch's elements

// ---- GEMM: C = A B; 2 flops per multiply-add.
Stack mm_args(const Dims& d, TensorOptions o) {  // M K N
  Generator g(1);
  return {input({d[0], d[1]}, o, g), input({d[1], d[2]}, o, g)};
}
Cost mm_cost(const Dims& d, double e) {
  return {2.0 * d[0] * d[1] * d[2], e * (d[0] * d[1] + d[1] * d[2] + d[0] * d[2])};
}
// addmm as a linear layer uses it: bias [N] broadcast over the rows, plus one add per output.
Stack addmm_args(const Dims& d, TensorOptions o) {  // M K N
  Generator g(1);
  return {input({d[2]}, o, g), input({d[0], d[1]}, o, g), input({d[1], d[2]}, o, g), scalar(1), scalar(1)};
}
Cost addmm_cost(const Dims& d, double e) {
  const Cost c = mm_cost(d, e);
  return {c.flops + 1.0 * d[0] * d[2], c.bytes + e * d[2]};
}
Stack bmm_args(const Dims& d, TensorOptions o) {  // B M K N
  Generator g(1);
  return {input({d[0], d[1], d[2]}, o, g), input({d[0], d[2], d[3]}, o, g)};
}
Cost bmm_cost(const Dims& d, double e) {
  const Cost c = mm_cost({d[1], d[2], d[3]}, e);
  return {c.flops * d[0], c.bytes * d[0]};
}

// ---- conv2d: stride 1, padding R/2 ("same" for odd R), with bias; 2 flops
// per multiply-add of the direct algorithm, one add per output for the bias.
int64_t conv_out(int64_t size, int64_t r) { return size + 2 * (r / 2) - r + 1; }
Stack conv2d_args(const Dims& d, TensorOptions o) {  // N C H W K R
  Generator g(1);
  return {input({d[0], d[1], d[2], d[3]}, o, g),
          input({d[4], d[1], d[5], d[5]}, o, g),
          input({d[4]}, o, g),
          ints({1, 1}),
          ints({d[5] / 2, d[5] / 2}),
          ints({1, 1}),
          IValue::Payload(false),
          ints({0, 0}),
          IValue::Payload(int64_t{1})};
}
Cost conv2d_cost(const Dims& d, double e) {
  const double outputs = 1.0 * d[0] * d[4] * conv_out(d[2], d[5]) * conv_out(d[3], d[5]);
  return {outputs * (2.0 * d[1] * d[5] * d[5] + 1),
          e * (nchw(d) + 1.0 * d[4] * d[1] * d[5] * d[5] + d[4] + outputs)};
}

// ---- pooling: an R x R window with stride R, no padding; one compare (max)
// or add (avg) per window element, avg one multiply per output.
Stack max_pool_args(const Dims& d, TensorOptions o) {  // N C H W R
  Generator g(1);
  return {input({d[0], d[1], d[2], d[3]}, o, g), ints({d[4], d[4]}), ints({d[4], d[4]}), ints({0, 0}),
          ints({1, 1}), IValue::Payload(false)};
}
Stack avg_pool_args(const Dims& d, TensorOptions o) {  // N C H W R
  Generator g(1);
  return {input({d[0], d[1], d[2], d[3]}, o, g), ints({d[4], d[4]}), ints({d[4], d[4]}), ints({0, 0}),
          IValue::Payload(false), IValue::Payload(true), IValue()};
}
Cost pool_cost(const Dims& d, double e, double per_output) {
  const double outputs = d[0] * d[1] * static_cast<double>(d[2] / d[4]) * static_cast<double>(d[3] / d[4]);
  return {outputs * (1.0 * d[4] * d[4] + per_output), e * (nchw(d) + outputs)};
}
Cost max_pool_cost(const Dims& d, double e) { return pool_cost(d, e, 0); }
Cost avg_pool_cost(const Dims& d, double e) { return pool_cost(d, e, 1); }

// ---- norms. batch_norm in training mode (batch statistics, running stats
// updated): per element 3 flops for the statistics (add; subtract and FMA
// for the variance) and 4 to normalise and scale (subtract, multiply, FMA).
Stack batch_norm_args(const Dims& d, TensorOptions o) {  // N C H W
  Generator g(1);
  return {input(d, o, g),
          input({d[1]}, o, g),
          input({d[1]}, o, g),
          boxing::box(zeros({d[1]}, o)),
          boxing::box(ones({d[1]}, o)),
          IValue::Payload(true),
          IValue::Payload(0.1),
          IValue::Payload(1e-5)};
}
Cost batch_norm_cost(const Dims& d, double e) {
  const double n = product(d);
  return {7 * n, e * (2 * n + 6.0 * d[1])};  // x in, y out; weight, bias, running stats in and out
}
// layer_norm over the last dim of [R, C], with weight and bias; the same 7 per element.
Stack layer_norm_args(const Dims& d, TensorOptions o) {  // R C
  Generator g(1);
  return {input(d, o, g), ints({d[1]}), input({d[1]}, o, g), input({d[1]}, o, g), IValue::Payload(1e-5)};
}
Cost layer_norm_cost(const Dims& d, double e) {
  const double n = product(d);
  return {7 * n, e * (2 * n + 2.0 * d[1])};
}

// ---- softmax over the last dim of [R, C]: per element a compare (max), a
// subtract, an exp, an add (sum) and a multiply (by 1/sum).
Stack softmax_args(const Dims& d, TensorOptions o) {  // R C
  Generator g(1);
  return {input(d, o, g), IValue::Payload(int64_t{1}), IValue()};
}
Cost softmax_cost(const Dims& d, double e) { return {5 * product(d), 2 * e * product(d)}; }

// ---- attention: query, key, value [B, H, T, D], no mask, not causal:
// Q K^T and P V are 2 T T D flops each per head, the softmax 5 per score.
Stack attention_args(const Dims& d, TensorOptions o) {  // B H T D
  Generator g(1);
  return {input(d, o, g), input(d, o, g), input(d, o, g), IValue(), IValue::Payload(false), IValue()};
}
Cost attention_cost(const Dims& d, double e) {
  const double heads = 1.0 * d[0] * d[1], t = static_cast<double>(d[2]), dd = static_cast<double>(d[3]);
  return {heads * (4 * t * t * dd + 5 * t * t), e * 4 * heads * t * dd};  // q, k, v in; output out
}

// ---- reductions over the last dim: one add or compare per element (mean
// one multiply per output).
Stack reduce_args(const Dims& d, TensorOptions o) {
  Generator g(1);
  return {input(d, o, g), ints({-1}), IValue::Payload(false), IValue()};
}
Stack reduce_args_no_dtype(const Dims& d, TensorOptions o) {
  Generator g(1);
  return {input(d, o, g), ints({-1}), IValue::Payload(false)};
}
Cost reduce_cost(const Dims& d, double e) {
  const double n = product(d), outputs = n / static_cast<double>(d.back());
  return {n, e * (n + outputs)};
}

// ---- elementwise: one flop per output (exp counts as one).
Stack binary_args(const Dims& d, TensorOptions o) {
  Generator g(1);
  return {input(d, o, g), input(d, o, g), scalar(1)};
}
Stack mul_args(const Dims& d, TensorOptions o) {
  Generator g(1);
  return {input(d, o, g), input(d, o, g)};
}
Stack unary_args(const Dims& d, TensorOptions o) {
  Generator g(1);
  return {input(d, o, g)};
}
Cost binary_cost(const Dims& d, double e) { return {product(d), 3 * e * product(d)}; }
Cost unary_cost(const Dims& d, double e) { return {product(d), 2 * e * product(d)}; }

const std::vector<Dims> kGemmShapes = {{64, 64, 64}, {256, 256, 256}, {1024, 1024, 1024}, {128, 784, 512},
                                       {127, 513, 257}, {1, 1024, 1024}};
const std::vector<Dims> kPoolShapes = {{8, 16, 32, 32, 2}, {32, 64, 56, 56, 2}, {8, 16, 33, 17, 3}, {1, 1, 1, 1, 1}};
const std::vector<Dims> kRowShapes = {{64, 768}, {4096, 1024}, {33, 1}, {1, 65537}};
const std::vector<Dims> kFlatShapes = {{4096}, {16777216}, {1024, 1024}, {33, 65, 7}, {1}};
const std::vector<Dims> kReduceShapes = {{16777216}, {4096, 1024}, {1023, 1}, {1}};

}  // namespace

const std::vector<BenchOp>& bench_ops() {
  static const std::vector<BenchOp> table = {
      {"mm", "gemm", "mm", "MxKxN", 3, kGemmShapes, mm_args, call_op<op::mm>, mm_cost},
      {"addmm", "gemm", "addmm", "MxKxN (bias [N])", 3, {{128, 784, 512}, {1024, 1024, 1024}, {33, 65, 17}, {1, 512, 10}},
       addmm_args, call_op<op::addmm>, addmm_cost},
      {"bmm", "gemm", "bmm", "BxMxKxN", 4, {{16, 64, 64, 64}, {8, 128, 256, 64}, {3, 31, 17, 45}, {1, 1, 512, 512}},
       bmm_args, call_op<op::bmm>, bmm_cost},
      {"conv2d", "conv", "convolution", "NxCxHxWxKxR (K filters RxR, stride 1, padding R/2)", 6,
       {{1, 3, 32, 32, 16, 3}, {8, 64, 28, 28, 64, 3}, {16, 64, 56, 56, 64, 3}, {3, 5, 17, 13, 7, 5},
        {2, 1, 1, 1, 1, 1}},
       conv2d_args, call_op<op::convolution>, conv2d_cost},
      {"max_pool2d", "pooling", "max_pool2d", "NxCxHxWxR (RxR window, stride R)", 5, kPoolShapes, max_pool_args,
       call_op<op::max_pool2d>, max_pool_cost},
      {"avg_pool2d", "pooling", "avg_pool2d", "NxCxHxWxR (RxR window, stride R)", 5, kPoolShapes, avg_pool_args,
       call_op<op::avg_pool2d>, avg_pool_cost},
      {"batch_norm", "norm", "batch_norm", "NxCxHxW (training mode)", 4,
       {{8, 16, 32, 32}, {32, 64, 56, 56}, {8, 3, 17, 1}, {2, 1, 1, 1}}, batch_norm_args, call_op<op::batch_norm>,
       batch_norm_cost},
      {"layer_norm", "norm", "layer_norm", "RxC (over the last dim)", 2, kRowShapes, layer_norm_args,
       call_op<op::layer_norm>, layer_norm_cost},
      {"softmax", "softmax", "softmax", "RxC (over the last dim)", 2, kRowShapes, softmax_args, call_op<op::softmax>,
       softmax_cost},
      {"scaled_dot_product_attention", "attention", "flash_attention", "BxHxTxD (query, key, value alike)", 4,
       {{16, 4, 128, 64}, {4, 8, 512, 64}, {2, 3, 77, 33}, {1, 1, 1, 8}}, attention_args,
       call_op<op::flash_attention>, attention_cost},
      {"sum", "reduction", "sum", "the input's shape (over the last dim)", 0, kReduceShapes, reduce_args,
       call_op<op::sum>, reduce_cost},
      {"mean", "reduction", "mean", "the input's shape (over the last dim)", 0, kReduceShapes, reduce_args_no_dtype,
       call_op<op::mean>, reduce_cost},
      {"amax", "reduction", "amax", "the input's shape (over the last dim)", 0, kReduceShapes, reduce_args_no_dtype,
       call_op<op::amax>, reduce_cost},
      {"add", "elementwise", "add", "the inputs' shape", 0, kFlatShapes, binary_args, call_op<op::add>, binary_cost},
      {"mul", "elementwise", "mul", "the inputs' shape", 0, kFlatShapes, mul_args, call_op<op::mul>, binary_cost},
      {"exp", "elementwise", "exp", "the input's shape", 0, kFlatShapes, unary_args, call_op<op::exp>, unary_cost},
      {"relu", "elementwise", "relu", "the input's shape", 0, kFlatShapes, unary_args, call_op<op::relu>, unary_cost},
  };
  return table;
}

const BenchOp& find_bench_op(const std::string& name) {
  std::string valid;
  for (const BenchOp& op : bench_ops()) {
    if (name == op.name) return op;
    valid += (valid.empty() ? "" : ", ") + std::string(op.name);
  }
  EMBER_FAIL("bench: unknown op '", name, "' (ops: ", valid, ")");
}

void check_shape(const BenchOp& op, const std::vector<int64_t>& dims) {
  EMBER_CHECK(op.num_dims == 0 || static_cast<int>(dims.size()) == op.num_dims, "bench: ", op.name,
              " takes shapes of ", op.num_dims, " numbers (", op.dims_doc, "), got '", shape_string(dims), "'");
  if (std::string(op.name) == "max_pool2d" || std::string(op.name) == "avg_pool2d")
    EMBER_CHECK(dims[4] <= dims[2] && dims[4] <= dims[3], "bench: ", op.name, " shape '", shape_string(dims),
                "': the window R = ", dims[4], " must fit in H and W");
}

}  // namespace ember::cli::bench
