// ember::nn pooling layers, as torch.nn: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d.
//
//   namespace nn = ember::nn;
//   nn::MaxPool2d pool(2);                                            // (N, C, H, W) -> (N, C, H/2, W/2)
//   nn::MaxPool2d pool3(nn::MaxPool2dOptions(3).stride(2).padding(1));
//   nn::AvgPool2d avg(nn::AvgPool2dOptions({2, 3}).count_include_pad(false));
//   nn::AdaptiveAvgPool2d gap(1);                                     // global average: (N, C, 1, 1)
//
// An int-list option is one value (both dims) or two (h, w). No parameters;
// the arithmetic is F::max_pool2d / avg_pool2d / adaptive_avg_pool2d
// (ember/nn/functional/pooling.h), on (N, C, H, W) or (C, H, W) inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/options/pooling.h"

namespace ember::nn {

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(MaxPool2dOptions options) : Module("MaxPool2d"), options(std::move(options)) {}
  explicit MaxPool2dImpl(IntArrayRef kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}

  Tensor forward(const Tensor& input);
  // The maxima and their int64 positions h * W + w in each input plane
  // (PyTorch's return_indices=True).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  // "MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=false)"
  void pretty_print(std::ostream& os) const override;

  const MaxPool2dOptions options;
};
EMBER_MODULE(MaxPool2d);

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(AvgPool2dOptions options) : Module("AvgPool2d"), options(std::move(options)) {}
  explicit AvgPool2dImpl(IntArrayRef kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}

  Tensor forward(const Tensor& input);
  // "AvgPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0])"
  void pretty_print(std::ostream& os) const override;

  const AvgPool2dOptions options;
};
EMBER_MODULE(AvgPool2d);

// (N, C, H, W) -> (N, C, oh, ow): output i averages input rows
// [floor(i H / oh), ceil((i + 1) H / oh)), and the same for columns.
class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions options)
      : Module("AdaptiveAvgPool2d"), options(std::move(options)) {}
  explicit AdaptiveAvgPool2dImpl(IntArrayRef output_size)
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}

  Tensor forward(const Tensor& input);
  // "AdaptiveAvgPool2d(output_size=[1, 1])"
  void pretty_print(std::ostream& os) const override;

  const AdaptiveAvgPool2dOptions options;
};
EMBER_MODULE(AdaptiveAvgPool2d);

}  // namespace ember::nn
