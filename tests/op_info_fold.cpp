// Op-info rows of im2col and col2im (F::unfold and F::fold, core/op_decls_conv.h).
// The reference is one naive loop over every (image, channel, kernel tap,
// block) in double: im2col reads the tap's input position (0 in the padding),
// col2im adds the column entry there.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/op_info.h"

namespace ember::testing {
namespace {

IValue ints(Shape v) { return IValue::Payload(std::move(v)); }

class Inputs {
 public:
  Inputs(DType t, uint64_t seed) : t_(t), gen_(seed) {}
  // Normal values; transposed: a view with the last two dims swapped.
  Tensor make(const Shape& s, bool transposed = false) {
    if (!transposed) return randn(s, TensorOptions(DType::Float64), &gen_).to(t_);
    Shape swapped = s;
    std::swap(swapped[s.size() - 1], swapped[s.size() - 2]);
    return randn(swapped, TensorOptions(DType::Float64), &gen_).to(t_).transpose(-1, -2);
  }

 private:
  DType t_;
  Generator gen_;
};

// The block geometry: kernel, dilation, padding, stride as (h, w), the image and the blocks per dim.
struct Blocks {
  Shape k, d, p, s;
  int64_t h, w, oh, ow;
};

Blocks blocks(const Shape& k, const Shape& d, const Shape& p, const Shape& s, int64_t h, int64_t w) {
  return {k, d, p, s, h, w, (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) / s[0] + 1,
          (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) / s[1] + 1};
}

// Calls f(image position or -1 in the padding, column position) for every
// entry of one image's columns (channel c of `channels`).
template <class F>
void for_each_entry(const Blocks& b, int64_t channels, F f) {
  const int64_t blocks_n = b.oh * b.ow;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < b.k[0]; ++i)
      for (int64_t j = 0; j < b.k[1]; ++j)
        for (int64_t y = 0; y < b.oh; ++y)
          for (int64_t x = 0; x < b.ow; ++x) {
            const int64_t row = (c * b.k[0] + i) * b.k[1] + j, col = row * blocks_n + y * b.ow + x;
            const int64_t ih = y * b.s[0] - b.p[0] + i * b.d[0], iw = x * b.s[1] - b.p[1] + j * b.d[1];
            const bool inside = ih >= 0 && ih < b.h && iw >= 0 && iw < b.w;
            f(inside ? (c * b.h + ih) * b.w + iw : -1, col);
          }
}

// im2col(self, kernel_size, dilation, padding, stride)
Expected im2col_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const bool batched = x.dim() == 4;
  const int64_t n = batched ? x.shape[0] : 1, channels = x.shape[x.dim() - 3];
  const Blocks b = blocks(a.ints(1), a.ints(2), a.ints(3), a.ints(4), x.shape[x.dim() - 2], x.shape.back());
  const int64_t rows = channels * b.k[0] * b.k[1], cols = b.oh * b.ow;
  Shape shape = {rows, cols};
  if (batched) shape.insert(shape.begin(), n);
  HostTensor out(shape, a.out);
  for (int64_t img = 0; img < n; ++img) {
    for_each_entry(b, channels, [&](int64_t at, int64_t col) {
      if (at >= 0) out.set(img * rows * cols + col, x.f[img * channels * b.h * b.w + at]);
    });
  }
  return {{out}};
}

// col2im(self, output_size, kernel_size, dilation, padding, stride)
Expected col2im_ref(const RefArgs& a) {
  const HostTensor cols = a.tensor(0);
  const bool batched = cols.dim() == 3;
  const Shape size = a.ints(1);
  const Blocks b = blocks(a.ints(2), a.ints(3), a.ints(4), a.ints(5), size[0], size[1]);
  const int64_t n = batched ? cols.shape[0] : 1, rows = cols.shape[cols.dim() - 2];
  const int64_t channels = rows / (b.k[0] * b.k[1]), blocks_n = cols.shape.back();
  Shape shape = {channels, size[0], size[1]};
  if (batched) shape.insert(shape.begin(), n);
  HostTensor out(shape, a.out);
  for (int64_t img = 0; img < n; ++img) {
    for_each_entry(b, channels, [&](int64_t at, int64_t col) {
      if (at >= 0) out.f[img * channels * b.h * b.w + at] += cols.f[img * rows * blocks_n + col];
    });
  }
  return {{out}};
}

std::vector<Sample> im2col_samples(DType t, SampleSize size) {
  Inputs in(t, 7300 + static_cast<uint64_t>(t) * 31 + (size == SampleSize::Large ? 7 : 0));
  auto s = [&](std::string name, const Tensor& x, Shape k, Shape d, Shape p, Shape st, std::string error = "") {
    return Sample{std::move(name), {IValue::Payload(x), ints(k), ints(d), ints(p), ints(st)}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.make({4, 8, 40, 40}), {3, 3}, {1, 1}, {1, 1}, {1, 1})};
  return {
      s("basic", in.make({2, 3, 5, 6}), {2, 3}, {1, 1}, {0, 0}, {1, 1}),
      s("padded_strided_dilated", in.make({1, 2, 7, 6}), {3, 2}, {2, 1}, {1, 2}, {2, 3}),
      s("unbatched_padded", in.make({3, 4, 5}), {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      s("transposed", in.make({2, 2, 5, 6}, true), {2, 2}, {1, 2}, {0, 1}, {2, 1}),
      s("empty_batch", in.make({0, 2, 4, 4}), {2, 2}, {1, 1}, {0, 0}, {1, 1}),
      s("rank_5", in.make({1, 2, 3, 4, 4}), {2, 2}, {1, 1}, {0, 0}, {1, 1}, "3-D (C, H, W) or 4-D"),
      s("kernel_too_large", in.make({1, 2, 3, 3}), {5, 2}, {1, 1}, {0, 0}, {1, 1}, "no sliding block"),
      s("kernel_one_value", in.make({1, 2, 4, 4}), {2}, {1, 1}, {0, 0}, {1, 1}, "kernel_size to have 2 values"),
      s("stride_zero", in.make({1, 2, 4, 4}), {2, 2}, {1, 1}, {0, 0}, {0, 1}, "stride > 0"),
      s("negative_padding", in.make({1, 2, 4, 4}), {2, 2}, {1, 1}, {-1, 0}, {1, 1}, "padding >= 0"),
  };
}

std::vector<Sample> col2im_samples(DType t, SampleSize size) {
  Inputs in(t, 7400 + static_cast<uint64_t>(t) * 31 + (size == SampleSize::Large ? 7 : 0));
  auto s = [&](std::string name, const Tensor& x, Shape out, Shape k, Shape d, Shape p, Shape st,
               std::string error = "") {
    return Sample{
        std::move(name), {IValue::Payload(x), ints(out), ints(k), ints(d), ints(p), ints(st)}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) {
    return {s("large", in.make({4, 72, 1600}), {40, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1})};
  }
  return {
      s("basic", in.make({2, 18, 16}), {5, 6}, {2, 3}, {1, 1}, {0, 0}, {1, 1}),
      s("padded_strided_dilated", in.make({1, 12, 9}), {7, 6}, {3, 2}, {2, 1}, {1, 2}, {2, 3}),
      s("unbatched_padded", in.make({16, 30}), {4, 5}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      s("transposed", in.make({2, 18, 16}, true), {5, 6}, {2, 3}, {1, 1}, {0, 0}, {1, 1}),
      s("empty_batch", in.make({0, 8, 9}), {4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}),
      s("rows_not_multiple", in.make({2, 17, 16}), {5, 6}, {2, 3}, {1, 1}, {0, 0}, {1, 1},
        "multiple of the product of kernel_size"),
      s("wrong_block_count", in.make({2, 18, 15}), {5, 6}, {2, 3}, {1, 1}, {0, 0}, {1, 1}, "sliding blocks"),
      s("rank_4", in.make({1, 2, 18, 16}), {5, 6}, {2, 3}, {1, 1}, {0, 0}, {1, 1}, "2-D (C kH kW, L) or 3-D"),
      s("output_too_small", in.make({1, 4, 1}), {1, 1}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, "no sliding block"),
  };
}

const std::vector<DType> kFoldDTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

}  // namespace

void add_fold_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "im2col",
                  .dtypes = kFoldDTypes,
                  .out_dtype = same_dtype,
                  .samples = im2col_samples,
                  .reference = im2col_ref,
                  .exact = true,
                  .differentiable = true});
  rows.push_back({.name = "col2im",
                  .dtypes = kFoldDTypes,
                  .out_dtype = same_dtype,
                  .samples = col2im_samples,
                  .reference = col2im_ref,
                  // K (Note [Tolerances]): a pixel sums at most one value per kernel tap.
                  .accumulation = [](const Sample& s) { return numel_of(std::get<Shape>(s.args[2].payload())); },
                  .differentiable = true});
}

}  // namespace ember::testing
