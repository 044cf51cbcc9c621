// The options of the activations that have some, shared by the layers
// (ember/nn/modules/activation.h) and the functions
// (ember/nn/functional/activation.h, where F::GELUFuncOptions and friends
// name them), as libtorch's torch/nn/options.
#pragma once

#include <string>
#include <utility>

namespace ember::nn {

class GELUOptions {
 public:
  // "none" (exact, with erf) or "tanh" (the tanh approximation).
  GELUOptions& approximate(std::string v) {
    approximate_ = std::move(v);
    return *this;
  }
  const std::string& approximate() const { return approximate_; }

 private:
  std::string approximate_ = "none";
};

class LeakyReLUOptions {
 public:
  // The slope for x < 0 (default 0.01).
  LeakyReLUOptions& negative_slope(double v) {
    negative_slope_ = v;
    return *this;
  }
  double negative_slope() const { return negative_slope_; }

 private:
  double negative_slope_ = 0.01;
};

class ELUOptions {
 public:
  // x for x > 0, alpha * (exp(x) - 1) otherwise (default alpha 1).
  ELUOptions& alpha(double v) {
    alpha_ = v;
    return *this;
  }
  double alpha() const { return alpha_; }

 private:
  double alpha_ = 1.0;
};

class SoftplusOptions {
 public:
  // log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
  SoftplusOptions& beta(double v) {
    beta_ = v;
    return *this;
  }
  SoftplusOptions& threshold(double v) {
    threshold_ = v;
    return *this;
  }
  double beta() const { return beta_; }
  double threshold() const { return threshold_; }

 private:
  double beta_ = 1.0;
  double threshold_ = 20.0;
};

}  // namespace ember::nn
