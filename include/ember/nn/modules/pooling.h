// ember::nn pooling layers, as torch.nn: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
// and their 3-D forms MaxPool3d, AvgPool3d, AdaptiveAvgPool3d.
//
//   namespace nn = ember::nn;
//   nn::MaxPool2d pool(2);                                            // (N, C, H, W) -> (N, C, H/2, W/2)
//   nn::MaxPool2d pool3(nn::MaxPool2dOptions(3).stride(2).padding(1));
//   nn::AvgPool2d avg(nn::AvgPool2dOptions({2, 3}).count_include_pad(false));
//   nn::AdaptiveAvgPool2d gap(1);                                     // global average: (N, C, 1, 1)
//   nn::MaxPool3d vol(nn::MaxPool3dOptions({1, 2, 2}));               // (N, C, D, H, W) -> (N, C, D, H/2, W/2)
//
// An int-list option is one value (every dim) or one per dim. No parameters;
// the arithmetic is F::max_pool2d / avg_pool2d / adaptive_avg_pool2d on
// (N, C, H, W) or (C, H, W) inputs, F::max_pool3d / avg_pool3d /
// adaptive_avg_pool3d on (N, C, D, H, W) or (C, D, H, W) ones
// (ember/nn/functional/pooling.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/options/pooling.h"

namespace ember::nn {

// The layer behind MaxPool2d (D = 2) and MaxPool3d (D = 3).
template <size_t D>
class MaxPoolNdImpl : public Module {
 public:
  explicit MaxPoolNdImpl(MaxPoolOptions<D> options)
      : Module(MaxPoolOptions<D>::name()), options(std::move(options)) {}
  explicit MaxPoolNdImpl(IntArrayRef kernel_size) : MaxPoolNdImpl(MaxPoolOptions<D>(kernel_size)) {}

  Tensor forward(const Tensor& input);
  // The maxima and their int64 positions in each input plane, h * W + w
  // (3-D: (d * H + h) * W + w; PyTorch's return_indices=True).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  // "MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=false)"
  void pretty_print(std::ostream& os) const override;

  const MaxPoolOptions<D> options;
};

// The layer behind AvgPool2d and AvgPool3d.
template <size_t D>
class AvgPoolNdImpl : public Module {
 public:
  explicit AvgPoolNdImpl(AvgPoolOptions<D> options)
      : Module(AvgPoolOptions<D>::name()), options(std::move(options)) {}
  explicit AvgPoolNdImpl(IntArrayRef kernel_size) : AvgPoolNdImpl(AvgPoolOptions<D>(kernel_size)) {}

  Tensor forward(const Tensor& input);
  // "AvgPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0])"
  void pretty_print(std::ostream& os) const override;

  const AvgPoolOptions<D> options;
};

// The layer behind AdaptiveAvgPool2d and AdaptiveAvgPool3d: (N, C, H, W) ->
// (N, C, oh, ow): output i averages input rows [floor(i H / oh),
// ceil((i + 1) H / oh)), and the same for columns (and depth, in 3-D).
template <size_t D>
class AdaptiveAvgPoolNdImpl : public Module {
 public:
  explicit AdaptiveAvgPoolNdImpl(AdaptiveAvgPoolOptions<D> options)
      : Module(AdaptiveAvgPoolOptions<D>::name()), options(std::move(options)) {}
  explicit AdaptiveAvgPoolNdImpl(IntArrayRef output_size)
      : AdaptiveAvgPoolNdImpl(AdaptiveAvgPoolOptions<D>(output_size)) {}

  Tensor forward(const Tensor& input);
  // "AdaptiveAvgPool2d(output_size=[1, 1])"
  void pretty_print(std::ostream& os) const override;

  const AdaptiveAvgPoolOptions<D> options;
};

class MaxPool2dImpl : public MaxPoolNdImpl<2> {
 public:
  using MaxPoolNdImpl<2>::MaxPoolNdImpl;
};
class MaxPool3dImpl : public MaxPoolNdImpl<3> {
 public:
  using MaxPoolNdImpl<3>::MaxPoolNdImpl;
};
class AvgPool2dImpl : public AvgPoolNdImpl<2> {
 public:
  using AvgPoolNdImpl<2>::AvgPoolNdImpl;
};
class AvgPool3dImpl : public AvgPoolNdImpl<3> {
 public:
  using AvgPoolNdImpl<3>::AvgPoolNdImpl;
};
class AdaptiveAvgPool2dImpl : public AdaptiveAvgPoolNdImpl<2> {
 public:
  using AdaptiveAvgPoolNdImpl<2>::AdaptiveAvgPoolNdImpl;
};
class AdaptiveAvgPool3dImpl : public AdaptiveAvgPoolNdImpl<3> {
 public:
  using AdaptiveAvgPoolNdImpl<3>::AdaptiveAvgPoolNdImpl;
};
EMBER_MODULE(MaxPool2d);
EMBER_MODULE(MaxPool3d);
EMBER_MODULE(AvgPool2d);
EMBER_MODULE(AvgPool3d);
EMBER_MODULE(AdaptiveAvgPool2d);
EMBER_MODULE(AdaptiveAvgPool3d);

}  // namespace ember::nn
