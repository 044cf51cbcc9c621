// ember::nn::Flatten and Unflatten, as torch.nn.
//
//   ember::nn::Flatten flatten;                     // (N, C, H, W) -> (N, C*H*W)
//   ember::nn::Unflatten unflatten(ember::nn::UnflattenOptions(1, {16, 7, 7}));  // (N, 784) -> (N, 16, 7, 7)
#pragma once

#include <cstdint>
#include <iosfwd>
#include <utility>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

class FlattenOptions {
 public:
  FlattenOptions() = default;
  FlattenOptions& start_dim(int64_t v) {
    start_dim_ = v;
    return *this;
  }
  FlattenOptions& end_dim(int64_t v) {
    end_dim_ = v;
    return *this;
  }
  int64_t start_dim() const { return start_dim_; }
  int64_t end_dim() const { return end_dim_; }

 private:
  int64_t start_dim_ = 1;  // keeps the batch dim, unlike Tensor::flatten's 0
  int64_t end_dim_ = -1;
};

// Merges dims start_dim..end_dim into one (a view where the strides allow).
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : Module("Flatten"), options(options) {}
  FlattenImpl(int64_t start_dim, int64_t end_dim = -1)
      : FlattenImpl(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
  Tensor forward(const Tensor& input);
  // "Flatten(start_dim=1, end_dim=-1)"
  void pretty_print(std::ostream& os) const override;

  const FlattenOptions options;
};
EMBER_MODULE(Flatten);

class UnflattenOptions {
 public:
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  int64_t dim() const { return dim_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }

 private:
  int64_t dim_;
  std::vector<int64_t> sizes_;
};

// Splits dim `dim` into `sizes` (their product must equal its size). A braced
// list cannot pass through the holder's forwarding constructor: write
// Unflatten(UnflattenOptions(1, {16, 7, 7})).
class UnflattenImpl : public Module {
 public:
  explicit UnflattenImpl(UnflattenOptions options) : Module("Unflatten"), options(std::move(options)) {}
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  Tensor forward(const Tensor& input);
  // "Unflatten(dim=1, unflattened_size=[16, 7, 7])"
  void pretty_print(std::ostream& os) const override;

  const UnflattenOptions options;
};
EMBER_MODULE(Unflatten);

}  // namespace ember::nn
