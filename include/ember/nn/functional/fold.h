// ember::nn::functional unfold and fold, as torch.nn.functional (im2col and
// col2im):
//
//   namespace F = ember::nn::functional;
//   Tensor cols = F::unfold(x, {2, 3}, /*dilation=*/1, /*padding=*/1, /*stride=*/2);  // x (N, C, H, W)
//   Tensor back = F::fold(cols, {H, W}, {2, 3}, 1, 1, 2);                              // (N, C, H, W)
//   Tensor c = F::unfold(x, F::UnfoldFuncOptions({2, 3}).padding(1).stride(2));       // libtorch's form
//   Tensor f = F::fold(cols, F::FoldFuncOptions({H, W}, {2, 3}).padding(1).stride(2));
//
// unfold: (N, C, H, W) -> (N, C kH kW, L), or unbatched (C, H, W) -> (C kH kW, L):
// column l holds the sliding block l (in row-major block order) of the
// zero-padded input, row (c, i, j) its element c, i * dilation, j * dilation.
// L = prod over (h, w) of (size + 2 padding - dilation (k - 1) - 1) / stride + 1.
// fold: the adjoint, (N, C kH kW, L) or (C kH kW, L) -> (N, C, H, W) or
// (C, H, W) with (H, W) = output_size: each column entry is added where
// unfold would have taken it from (overlapping blocks sum; the padding is
// dropped). fold(unfold(x)) is x times the number of blocks covering each
// element. Each is the other's derivative. Int-list arguments are one value
// (both dims) or two (h, w). Floating dtypes (fold sums float16/bfloat16 in
// float32 and rounds once).
#pragma once

#include <concepts>

#include "ember/nn/options/fold.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation = 1, IntArrayRef padding = 0,
              IntArrayRef stride = 1);

Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation = 1,
            IntArrayRef padding = 0, IntArrayRef stride = 1);

// ---- libtorch's options forms (Note [Options forms] in options_support.h) ----

using UnfoldFuncOptions = nn::UnfoldOptions;
using FoldFuncOptions = nn::FoldOptions;

template <std::same_as<UnfoldFuncOptions> Options>
Tensor unfold(const Tensor& input, const Options& options) {
  return functional::unfold(input, options.kernel_size(), options.dilation(), options.padding(), options.stride());
}
template <std::same_as<FoldFuncOptions> Options>
Tensor fold(const Tensor& input, const Options& options) {
  return functional::fold(input, options.output_size(), options.kernel_size(), options.dilation(), options.padding(),
                          options.stride());
}

}  // namespace ember::nn::functional
