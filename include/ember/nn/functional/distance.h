// ember::nn::functional distances, as torch.nn.functional:
//
//   namespace F = ember::nn::functional;
//   Tensor s = F::cosine_similarity(a, b, /*dim=*/1);   // a, b: (N, D) -> (N,)
//   Tensor d = F::pairwise_distance(a, b);              // (N,): ||a - b + eps||_2 per row
//
// Inputs broadcast, take floating dtypes (the promoted one is the result's),
// and the results are differentiable. For the distances between every row
// of two sets, see ember::cdist.
#pragma once

#include <concepts>
#include <cstdint>

#include "ember/tensor.h"

namespace ember::nn::functional {

// sum(x1 * x2) / sqrt(max(||x1||^2, eps^2) * max(||x2||^2, eps^2)) along `dim`
// (of the broadcast shape), which drops.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);

// The p-norm of x1 - x2 + eps over the last dim (of the broadcast shape).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false);

// ---- libtorch's options forms (Note [Options forms] in options_support.h) ----

class CosineSimilarityFuncOptions {
 public:
  CosineSimilarityFuncOptions& dim(int64_t v) {
    dim_ = v;
    return *this;
  }
  CosineSimilarityFuncOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  int64_t dim() const { return dim_; }
  double eps() const { return eps_; }

 private:
  int64_t dim_ = 1;
  double eps_ = 1e-8;
};

class PairwiseDistanceFuncOptions {
 public:
  PairwiseDistanceFuncOptions& p(double v) {
    p_ = v;
    return *this;
  }
  PairwiseDistanceFuncOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  PairwiseDistanceFuncOptions& keepdim(bool v) {
    keepdim_ = v;
    return *this;
  }
  double p() const { return p_; }
  double eps() const { return eps_; }
  bool keepdim() const { return keepdim_; }

 private:
  double p_ = 2.0;
  double eps_ = 1e-6;
  bool keepdim_ = false;
};

template <std::same_as<CosineSimilarityFuncOptions> Options>
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const Options& options) {
  return functional::cosine_similarity(x1, x2, options.dim(), options.eps());
}
template <std::same_as<PairwiseDistanceFuncOptions> Options>
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const Options& options) {
  return functional::pairwise_distance(x1, x2, options.p(), options.eps(), options.keepdim());
}

}  // namespace ember::nn::functional
