// ember::nn::Linear and Identity, as torch.nn.
//
//   ember::nn::Linear fc(784, 128);                                   // y = x W^T + b
//   ember::nn::Linear head(ember::nn::LinearOptions(128, 10).bias(false));
//   ember::Tensor y = fc(x);                                          // (N, 784) -> (N, 128)
#pragma once

#include <cstdint>
#include <iosfwd>

#include "ember/nn/module.h"

namespace ember::nn {

class LinearOptions {
 public:
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  // Whether the layer adds a learned bias (default true).
  LinearOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_features_, out_features_;
  bool bias_ = true;
};

class LinearImpl : public Module {
 public:
  explicit LinearImpl(const LinearOptions& options);
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}

  // (*, in_features) -> (*, out_features).
  Tensor forward(const Tensor& input);
  // PyTorch's default init: kaiming_uniform_(weight, a = sqrt(5)), i.e.
  // U(-1/sqrt(in_features), 1/sqrt(in_features)), and the bias from the same range.
  void reset_parameters();
  // "Linear(in_features=784, out_features=128, bias=true)"
  void pretty_print(std::ostream& os) const override;

  const LinearOptions options;
  Tensor& weight;  // (out_features, in_features)
  Tensor& bias;    // (out_features); undefined with bias(false)
};
EMBER_MODULE(Linear);

// Returns its input unchanged: stands in where a model makes a layer optional.
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) { return input; }
};
EMBER_MODULE(Identity);

}  // namespace ember::nn
