// ember::nn::Unfold and Fold, as torch.nn: option holders over F::unfold and
// F::fold (ember/nn/functional/fold.h), without parameters.
//
//   namespace nn = ember::nn;
//   nn::Unfold unfold(nn::UnfoldOptions({2, 3}).padding(1).stride(2));   // (N, C, H, W) -> (N, C*6, L)
//   nn::Fold fold(nn::FoldOptions({8, 8}, {2, 3}).padding(1).stride(2));  // (N, C*6, L) -> (N, C, 8, 8)
#pragma once

#include <iosfwd>
#include <utility>

#include "ember/nn/module.h"
#include "ember/nn/options/fold.h"

namespace ember::nn {

class UnfoldImpl : public Module {
 public:
  explicit UnfoldImpl(UnfoldOptions options) : Module("Unfold"), options(std::move(options)) {}
  explicit UnfoldImpl(IntArrayRef kernel_size) : UnfoldImpl(UnfoldOptions(kernel_size)) {}

  Tensor forward(const Tensor& input);
  // "Unfold(kernel_size=[2, 3], dilation=[1, 1], padding=[1, 1], stride=[2, 2])"
  void pretty_print(std::ostream& os) const override;

  const UnfoldOptions options;
};
EMBER_MODULE(Unfold);

class FoldImpl : public Module {
 public:
  explicit FoldImpl(FoldOptions options) : Module("Fold"), options(std::move(options)) {}
  FoldImpl(IntArrayRef output_size, IntArrayRef kernel_size) : FoldImpl(FoldOptions(output_size, kernel_size)) {}

  Tensor forward(const Tensor& input);
  // "Fold(output_size=[8, 8], kernel_size=[2, 3], dilation=[1, 1], padding=[1, 1], stride=[2, 2])"
  void pretty_print(std::ostream& os) const override;

  const FoldOptions options;
};
EMBER_MODULE(Fold);

}  // namespace ember::nn
