// ember::nn::functional cosine_similarity and pairwise_distance: composites
// of differentiable ops (mul, sum, clamp, rsqrt, norm).
#include "ember/nn/functional/distance.h"

#include <algorithm>

#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember::nn::functional {

// Each squared norm is clamped separately, so a tiny vector cannot make the
// denominator vanish; x / sqrt(x * x) keeps more digits than x / (|x| |x|).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  const DType dtype = result_type(x1, x2);
  EMBER_CHECK(is_floating_point(dtype), "cosine_similarity: expected floating-point inputs, got ", x1.dtype(),
              " and ", x2.dtype());
  const DimVector shape = broadcast_shapes(x1.sizes(), x2.sizes(), "cosine_similarity");
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(shape.size()), "cosine_similarity");
  const Tensor a = x1.to(dtype).expand(shape), b = x2.to(dtype).expand(shape);
  const Tensor dot = (a * b).sum({d});
  const Tensor aa = (a * a).sum({d}).clamp(eps * eps), bb = (b * b).sum({d}).clamp(eps * eps);
  return dot * (aa * bb).rsqrt();
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t last = std::max<int64_t>(std::max(x1.dim(), x2.dim()) - 1, 0);
  return (x1 - x2 + eps).norm(p, {last}, keepdim);
}

}  // namespace ember::nn::functional
