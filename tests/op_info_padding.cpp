// Op-info rows of the padding ops (Note [The op-info table] in
// tests/op_info.h): constant_pad_nd, reflection_pad, replication_pad,
// circular_pad and the backward op of each but the constant one. The
// reference maps each output position to the input position it reads,
// written as the definition (reflect, replicate, or crop then wrap around).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/op_info.h"
#include "tests/op_info_pooling_inputs.h"

namespace ember::testing {
namespace {

const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
const std::vector<DType> kAllTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                      DType::Int32,   DType::Int64,   DType::UInt8,   DType::Bool};

IValue ints(Shape v) { return IValue::Payload(std::move(v)); }
IValue tensor(const Tensor& t) { return IValue::Payload(t); }

using Inputs = PoolingInputs;

// Output position o of a dim of size n padded by (left, right): the input position it reads, or -1 (constant).
// Circular crops what a negative padding removes, then wraps around what is left.
enum class Mode { Constant, Reflect, Replicate, Circular };
int64_t source(Mode m, int64_t o, int64_t left, int64_t right, int64_t n) {
  int64_t i = o - left;
  if (m == Mode::Constant) return i >= 0 && i < n ? i : -1;
  if (m == Mode::Circular) {
    const int64_t first = std::max<int64_t>(-left, 0), kept = n - first - std::max<int64_t>(-right, 0);
    int64_t k = o - std::max<int64_t>(left, 0);
    while (k < 0) k += kept;
    return first + k % kept;
  }
  if (m == Mode::Replicate) return std::clamp<int64_t>(i, 0, n - 1);
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

Shape padded_shape(const Shape& in, const Shape& pad) {
  Shape out = in;
  const size_t k = pad.size() / 2;
  for (size_t i = 0; i < k; ++i) out[in.size() - 1 - i] += pad[2 * i] + pad[2 * i + 1];
  return out;
}

// Calls f(output linear index, input linear index or -1) for every output element.
template <class F>
void for_each_padded(Mode m, const Shape& in, const Shape& pad, F f) {
  const Shape out = padded_shape(in, pad);
  const size_t nd = in.size(), k = pad.size() / 2;
  Shape idx(nd, 0);
  for (int64_t o = 0; o < numel_of(out); ++o) {
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < nd; ++d) {
      int64_t i = idx[d];
      const size_t from_end = nd - 1 - d;
      if (from_end < k) i = source(m, idx[d], pad[2 * from_end], pad[2 * from_end + 1], in[d]);
      if (i < 0) inside = false;
      src = src * in[d] + i;
    }
    f(o, inside ? src : -1);
    for (int64_t d = static_cast<int64_t>(nd) - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
}

Expected pad_ref(Mode m, const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const Shape pad = a.ints(1);
  HostTensor y(padded_shape(x.shape, pad), a.out);
  const double fill = m == Mode::Constant ? a.number(2) : 0.0;
  for_each_padded(m, x.shape, pad, [&](int64_t o, int64_t i) {
    if (y.floating())
      y.set(o, i < 0 ? fill : x.f[i]);
    else if (i < 0)
      y.set(o, fill);
    else
      y.set_int(o, x.i[i]);
  });
  return {{y}};
}

Expected pad_backward_ref(Mode m, const RefArgs& a) {
  const HostTensor g = a.tensor(0);
  const Shape in_shape = a.ints(1), pad = a.ints(2);
  HostTensor gi(in_shape, a.out);
  for_each_padded(m, in_shape, pad, [&](int64_t o, int64_t i) { gi.f[i] += g.f[o]; });
  return {{gi}};
}

std::vector<Sample> constant_pad_samples(DType t, SampleSize size) {
  Inputs in("constant_pad_nd", t, size);
  const Scalar value = is_floating_point(t) ? Scalar(0.5) : Scalar(int64_t{2});
  auto s = [&](std::string name, const Tensor& x, Shape pad, std::string error = "") {
    return Sample{std::move(name), {tensor(x), ints(std::move(pad)), IValue::Payload(value)}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 38, 38}), {1, 1, 1, 1})};
  return {
      s("basic", in.values({2, 3, 4, 5}), {1, 2, 0, 1}),
      s("negative_crops", in.values({2, 3, 4, 5}), {-1, 2, 1, -2}),
      s("three_dims", in.values({2, 3, 4, 5}), {1, 1, 2, 0, 0, 1}),
      s("every_dim_1d", in.values({7}), {2, 3}),
      s("transposed", in.values({2, 3, 4, 5}, true), {2, 1, 1, 3}),
      s("crop_to_empty", in.values({2, 3, 4}), {-2, -2}),
      s("no_padding", in.values({2, 3}), {}),
      s("odd_length", in.values({2, 3, 4}), {1, 1, 1}, "pairs"),
      s("too_many_dims", in.values({2, 3}), {1, 1, 1, 1, 1, 1}, "pads 3 dims"),
      s("negative_output", in.values({1, 3, 4}), {1, 1, -3, -1}, "invalid"),
  };
}

std::vector<Sample> edge_pad_samples(const std::string& op, Mode m, DType t, SampleSize size) {
  Inputs in(op, t, size);
  auto s = [](std::string name, const Tensor& x, Shape pad, std::string error = "") {
    return Sample{std::move(name), {tensor(x), ints(std::move(pad))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 38, 38}), {1, 1, 1, 1})};
  std::vector<Sample> out = {
      s("pad1d", in.values({2, 3, 6}), {2, 3}),
      s("pad1d_unbatched", in.values({3, 6}), {5, 1}),
      s("pad2d", in.values({2, 2, 5, 6}), {1, 2, 3, 0}),
      s("pad2d_negative", in.values({1, 2, 5, 6}), {-1, 2, 2, -1}),
      s("pad2d_transposed", in.values({2, 2, 5, 6}, true), {2, 2, 1, 3}),
      s("pad3d", in.values({1, 2, 3, 4, 5}), {1, 1, 2, 0, 1, 2}),
      s("pad3d_unbatched", in.values({2, 3, 4, 5}), {1, 2, 0, 1, 2, 1}),
      s("empty_batch", in.values({0, 2, 5}), {1, 1}),
      s("rank_too_large", in.values({1, 2, 3, 4}), {1, 1}, "takes a 2-D or 3-D input"),
      s("eight_values", in.values({1, 2, 3, 4, 5}), {1, 1, 1, 1, 1, 1, 1, 1}, "expected 2, 4 or 6"),
      // Circular may crop to an empty dim (as torch), but not below.
      s("output_empty", in.values({2, 3}), m == Mode::Circular ? Shape{-2, -2} : Shape{-2, -1}, "invalid"),
  };
  if (m == Mode::Reflect) {
    out.push_back(s("padding_not_smaller_than_dim", in.values({1, 3, 4}), {4, 0}, "smaller than the padded dim"));
  } else if (m == Mode::Replicate) {
    out.push_back(s("padding_larger_than_dim", in.values({1, 3, 4}), {6, 5}));
  } else {
    out.push_back(s("padding_equal_to_dim", in.values({1, 3, 4}), {4, 4}));
    out.push_back(s("negative_then_wrap", in.values({1, 2, 5}), {-1, 2}));
    out.push_back(s("crop_to_one", in.values({1, 2, 5}), {-2, -2}));
    out.push_back(s("crop_to_empty", in.values({1, 2, 5}), {-3, -2}));
    out.push_back(s("wraps_twice", in.values({1, 3, 4}), {5, 0}, "wraps around more than once"));
    out.push_back(s("wraps_twice_after_crop", in.values({1, 2, 5}), {-3, 3}, "wraps around more than once"));
  }
  return out;
}

std::vector<Sample> edge_pad_backward_samples(const std::string& op, DType t, SampleSize size) {
  Inputs in(op, t, size);
  auto s = [](std::string name, const Tensor& g, Shape input, Shape pad, std::string error = "") {
    return Sample{std::move(name), {tensor(g), ints(std::move(input)), ints(std::move(pad))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 40, 40}), {4, 16, 38, 38}, {1, 1, 1, 1})};
  return {
      s("pad1d", in.values({2, 3, 11}), {2, 3, 6}, {2, 3}),
      s("pad2d", in.values({2, 2, 8, 9}), {2, 2, 5, 6}, {1, 2, 3, 0}),
      s("pad2d_negative_transposed", in.values({1, 2, 6, 7}, true), {1, 2, 5, 6}, {-1, 2, 2, -1}),
      s("pad3d", in.values({1, 2, 6, 6, 7}), {1, 2, 3, 4, 5}, {1, 1, 2, 0, 1, 2}),
      s("wrong_grad_shape", in.values({2, 3, 10}), {2, 3, 6}, {2, 3}, "expected grad_output of shape"),
  };
}

}  // namespace

void add_padding_rows(std::vector<OpInfo>& rows) {
  const auto row = [&](auto&&... args) { add_pooling_family_row(rows, args...); };
  row("constant_pad_nd", kAllTypes, constant_pad_samples, [](const RefArgs& a) { return pad_ref(Mode::Constant, a); });
  row(
      "reflection_pad", kAllTypes,
      [](DType t, SampleSize n) { return edge_pad_samples("reflection_pad", Mode::Reflect, t, n); },
      [](const RefArgs& a) { return pad_ref(Mode::Reflect, a); });
  row(
      "replication_pad", kAllTypes,
      [](DType t, SampleSize n) { return edge_pad_samples("replication_pad", Mode::Replicate, t, n); },
      [](const RefArgs& a) { return pad_ref(Mode::Replicate, a); });
  row(
      "reflection_pad_backward", kFloatTypes,
      [](DType t, SampleSize n) { return edge_pad_backward_samples("reflection_pad_backward", t, n); },
      [](const RefArgs& a) { return pad_backward_ref(Mode::Reflect, a); });
  row(
      "replication_pad_backward", kFloatTypes,
      [](DType t, SampleSize n) { return edge_pad_backward_samples("replication_pad_backward", t, n); },
      [](const RefArgs& a) { return pad_backward_ref(Mode::Replicate, a); });
  row(
      "circular_pad", kAllTypes,
      [](DType t, SampleSize n) { return edge_pad_samples("circular_pad", Mode::Circular, t, n); },
      [](const RefArgs& a) { return pad_ref(Mode::Circular, a); });
  row(
      "circular_pad_backward", kFloatTypes,
      [](DType t, SampleSize n) { return edge_pad_backward_samples("circular_pad_backward", t, n); },
      [](const RefArgs& a) { return pad_backward_ref(Mode::Circular, a); });
}

}  // namespace ember::testing
