// ember::nn::Dropout, as torch.nn.Dropout: active in training mode only.
//
//   ember::nn::Dropout drop(0.1);
//   model->train();  y = drop(x);   // zeroes ~10% of x, scales the rest by 1 / 0.9
//   model->eval();   y = drop(x);   // y is x
#pragma once

#include <iosfwd>

#include "ember/generator.h"
#include "ember/nn/module.h"

namespace ember::nn {

class DropoutOptions {
 public:
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: Dropout(0.1)
  // Probability of zeroing an element, in [0, 1].
  DropoutOptions& p(double v) {
    p_ = v;
    return *this;
  }
  // Where the masks come from; the default generator when null. The
  // generator must outlive the module.
  DropoutOptions& generator(Generator* v) {
    generator_ = v;
    return *this;
  }
  double p() const { return p_; }
  Generator* generator() const { return generator_; }

 private:
  double p_;
  Generator* generator_ = nullptr;
};

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  // F::dropout(input, p, is_training()).
  Tensor forward(const Tensor& input);
  // "Dropout(p=0.5)"
  void pretty_print(std::ostream& os) const override;

  const DropoutOptions options;
};
EMBER_MODULE(Dropout);

}  // namespace ember::nn
