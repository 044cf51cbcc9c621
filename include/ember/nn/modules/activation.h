// ember::nn activation modules, as torch.nn: each forward applies the
// function of the same name elementwise (or along `dim` for the softmaxes).
//
//   ember::nn::Sequential mlp(ember::nn::Linear(784, 128), ember::nn::GELU("tanh"), ember::nn::Linear(128, 10));
//   ember::nn::LeakyReLU act(ember::nn::LeakyReLUOptions().negative_slope(0.2));   // or LeakyReLU(0.2)
//
// None has parameters; PyTorch's `inplace` option is not offered (each
// returns a new tensor).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>

#include "ember/nn/module.h"
#include "ember/nn/options/activation.h"

namespace ember::nn {

// ---- without options ----

// max(x, 0)
class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(ReLU);

// x * sigmoid(x)
class SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(SiLU);

// 1 / (1 + exp(-x))
class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Sigmoid);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Tanh);

// x * relu6(x + 3) / 6
class HardswishImpl : public Module {
 public:
  HardswishImpl() : Module("Hardswish") {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Hardswish);

// relu6(x + 3) / 6
class HardsigmoidImpl : public Module {
 public:
  HardsigmoidImpl() : Module("Hardsigmoid") {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Hardsigmoid);

// x * tanh(softplus(x))
class MishImpl : public Module {
 public:
  MishImpl() : Module("Mish") {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Mish);

// ---- with options (ember/nn/options/activation.h) ----

class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {}) : Module("GELU"), options(options) {}
  explicit GELUImpl(std::string approximate) : GELUImpl(GELUOptions().approximate(std::move(approximate))) {}
  Tensor forward(const Tensor& input);
  // "GELU(approximate='none')"
  void pretty_print(std::ostream& os) const override;

  const GELUOptions options;
};
EMBER_MODULE(GELU);

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Module("LeakyReLU"), options(options) {}
  explicit LeakyReLUImpl(double negative_slope) : LeakyReLUImpl(LeakyReLUOptions().negative_slope(negative_slope)) {}
  Tensor forward(const Tensor& input);
  // "LeakyReLU(negative_slope=0.01)"
  void pretty_print(std::ostream& os) const override;

  const LeakyReLUOptions options;
};
EMBER_MODULE(LeakyReLU);

class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : Module("ELU"), options(options) {}
  explicit ELUImpl(double alpha) : ELUImpl(ELUOptions().alpha(alpha)) {}
  Tensor forward(const Tensor& input);
  // "ELU(alpha=1)"
  void pretty_print(std::ostream& os) const override;

  const ELUOptions options;
};
EMBER_MODULE(ELU);

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : Module("Softplus"), options(options) {}
  Tensor forward(const Tensor& input);
  // "Softplus(beta=1, threshold=20)"
  void pretty_print(std::ostream& os) const override;

  const SoftplusOptions options;
};
EMBER_MODULE(Softplus);

class SoftmaxOptions {
 public:
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: Softmax(1)
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

// exp(x) / sum(exp(x)) along dim.
class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  Tensor forward(const Tensor& input);
  // "Softmax(dim=1)"
  void pretty_print(std::ostream& os) const override;

  const SoftmaxOptions options;
};
EMBER_MODULE(Softmax);

// log(softmax(x)) along dim, computed stably.
class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const SoftmaxOptions& options) : Module("LogSoftmax"), options(options) {}
  Tensor forward(const Tensor& input);
  // "LogSoftmax(dim=1)"
  void pretty_print(std::ostream& os) const override;

  const SoftmaxOptions options;
};
EMBER_MODULE(LogSoftmax);

}  // namespace ember::nn
