// CPU kernels of im2col and col2im (core/op_decls_conv.h): F::unfold and
// F::fold, the unfolding that Note [Convolution as GEMM] in conv_gemm.cpp
// runs block by block, here made whole, one image at a time.
//
// An image (C, H, W) unfolds into (C kH kW, L), L = out_h out_w the sliding
// blocks, with the convolution geometry of one group, kernel (kH, kW) and the
// given padding, stride and dilation: cpu::im2col. col2im adds each column
// entry back where im2col took it from (cpu::col2im_add) into a zeroed image.
// Images are independent and each is written by one thread, in one fixed
// order, so results do not depend on the thread count. im2col copies in any
// floating dtype; col2im sums float16/bfloat16 in float32 and rounds once.
#include <algorithm>
#include <array>
#include <cstdint>

#include "core/dtype_dispatch.h"
#include "core/op_decls_conv.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/conv/conv_gemm.h"

namespace ember {
namespace {

using cpu::ConvGeometry;
using Pair = std::array<int64_t, 2>;

Pair pair_arg(const char* op, const char* name, IntArrayRef v) {
  EMBER_CHECK(v.size() == 2, op, ": expected ", name, " to have 2 values (h, w), got ", v);
  return {v[0], v[1]};
}

// The geometry of one image of `channels` channels and spatial size `image`
// (the unfolded input of im2col, the output of col2im), checked as PyTorch does.
ConvGeometry block_geometry(const char* op, int64_t channels, const Pair& image, IntArrayRef kernel_size,
                            IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  const Pair k = pair_arg(op, "kernel_size", kernel_size), d = pair_arg(op, "dilation", dilation);
  const Pair p = pair_arg(op, "padding", padding), s = pair_arg(op, "stride", stride);
  EMBER_CHECK(k[0] > 0 && k[1] > 0, op, ": expected kernel_size > 0, got ", kernel_size);
  EMBER_CHECK(d[0] > 0 && d[1] > 0, op, ": expected dilation > 0, got ", dilation);
  EMBER_CHECK(p[0] >= 0 && p[1] >= 0, op, ": expected padding >= 0, got ", padding);
  EMBER_CHECK(s[0] > 0 && s[1] > 0, op, ": expected stride > 0, got ", stride);
  ConvGeometry g;
  g.in_channels = g.out_channels = channels;
  g.in_h = image[0], g.in_w = image[1];
  g.kernel_h = k[0], g.kernel_w = k[1];
  g.dilation_h = d[0], g.dilation_w = d[1];
  g.pad_h = p[0], g.pad_w = p[1];
  g.stride_h = s[0], g.stride_w = s[1];
  g.out_h = (image[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  g.out_w = (image[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  const bool fits = image[0] + 2 * p[0] >= d[0] * (k[0] - 1) + 1 && image[1] + 2 * p[1] >= d[1] * (k[1] - 1) + 1;
  EMBER_CHECK(fits, op, ": the input of spatial size (", image[0], ", ", image[1], ") with kernel_size ", kernel_size,
              ", dilation ", dilation, " and padding ", padding,
              " has no sliding block: the kernel is larger than the padded input");
  return g;
}

// im2col(self (N, C, H, W) or (C, H, W), kernel_size, dilation, padding, stride) -> (N, C kH kW, L) or (C kH kW, L)
Tensor im2col_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                  IntArrayRef stride) {
  const char* op = "im2col";
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4, op,
              ": expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape ", self.sizes());
  const bool batched = self.dim() == 4;
  const int64_t batch = batched ? self.size(0) : 1, channels = self.size(-3);
  EMBER_CHECK(channels > 0 && self.size(-2) > 0 && self.size(-1) > 0, op,
              ": expected non-zero C, H and W (only the batch may be empty), got shape ", self.sizes());
  const ConvGeometry g =
      block_geometry(op, channels, {self.size(-2), self.size(-1)}, kernel_size, dilation, padding, stride);
  const int64_t rows = g.col_rows(), blocks = g.out_pixels();
  DimVector shape = {rows, blocks};
  if (batched) shape.insert(0, batch);
  Tensor out = make_empty(shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, rows * blocks));
    parallel_for(0, batch, grain, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        cpu::im2col<T>(g, x.data_ptr<T>() + n * channels * g.in_pixels(), 0, blocks,
                       out.data_ptr<T>() + n * rows * blocks);
      }
    });
  });
  return out;
}

// col2im(self (N, C kH kW, L) or (C kH kW, L), output_size, kernel_size, dilation, padding, stride)
// -> (N, C, H, W) or (C, H, W)
Tensor col2im_cpu(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
                  IntArrayRef padding, IntArrayRef stride) {
  const char* op = "col2im";
  EMBER_CHECK(self.dim() == 2 || self.dim() == 3, op,
              ": expected a 2-D (C kH kW, L) or 3-D (N, C kH kW, L) input, got shape ", self.sizes());
  const bool batched = self.dim() == 3;
  const int64_t batch = batched ? self.size(0) : 1, rows = self.size(-2), blocks = self.size(-1);
  const Pair k = pair_arg(op, "kernel_size", kernel_size), image = pair_arg(op, "output_size", output_size);
  EMBER_CHECK(k[0] > 0 && k[1] > 0, op, ": expected kernel_size > 0, got ", kernel_size);
  EMBER_CHECK(rows > 0 && rows % (k[0] * k[1]) == 0, op,
              ": expected the size of the input's dim ", self.dim() - 2, " (", rows,
              ") to be a non-zero multiple of the product of kernel_size ", kernel_size, " (input of shape ",
              self.sizes(), ")");
  EMBER_CHECK(image[0] > 0 && image[1] > 0, op, ": expected output_size > 0, got ", output_size);
  const ConvGeometry g = block_geometry(op, rows / (k[0] * k[1]), image, kernel_size, dilation, padding, stride);
  EMBER_CHECK(blocks == g.out_pixels(), op, ": output_size ", output_size, ", kernel_size ", kernel_size,
              ", dilation ", dilation, ", padding ", padding, " and stride ", stride, " make ", g.out_h, " * ",
              g.out_w, " = ", g.out_pixels(), " sliding blocks, but the input of shape ", self.sizes(), " has ",
              blocks);
  DimVector shape = {g.in_channels, image[0], image[1]};
  if (batched) shape.insert(0, batch);
  const bool widen = self.dtype() == DType::Float16 || self.dtype() == DType::BFloat16;
  const DType ct = widen ? DType::Float32 : self.dtype();
  Tensor out = make_empty(shape, ct, self.device());
  if (out.numel() == 0) return widen ? out.to(self.dtype()) : out;
  const Tensor cols = (widen ? self.to(ct) : self).contiguous();
  const int64_t image_size = g.in_channels * g.in_pixels();
  auto fold = [&]<class T>() {
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, rows * blocks));
    parallel_for(0, batch, grain, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        T* img = out.data_ptr<T>() + n * image_size;
        std::fill(img, img + image_size, T(0));
        cpu::col2im_add<T>(g, cols.data_ptr<T>() + n * rows * blocks, 0, blocks, img);
      }
    });
  };
  if (ct == DType::Float64)
    fold.template operator()<double>();
  else
    fold.template operator()<float>();
  return widen ? out.to(self.dtype()) : out;
}

}  // namespace

void register_cpu_fold_kernels() {
  op::im2col.impl(DispatchKey::CPU, kFloatingDTypes, &im2col_cpu, "cpu::im2col");
  op::col2im.impl(DispatchKey::CPU, kFloatingDTypes, &col2im_cpu, "cpu::col2im");
}

}  // namespace ember
