#include "core/attention_composite.h"

#include <limits>

#include "ember/ops.h"

namespace ember::attention {

Tensor attention_probabilities(const Tensor& q, const Tensor& k, const Tensor& mask, bool causal, double scale) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor scores = q.matmul(k.transpose(-2, -1)).mul(Scalar(scale));
  if (mask.defined() && mask.dtype() == DType::Bool) scores = scores.masked_fill(mask.logical_not(), Scalar(-inf));
  else if (mask.defined()) scores = scores + mask;
  if (causal) {
    const Tensor keep = ones({q.size(-2), k.size(-2)}, TensorOptions().dtype(DType::Bool)).tril();
    scores = scores.masked_fill(keep.logical_not(), Scalar(-inf));
  }
  // Shift by the row max, except in rows with every key masked (max -inf):
  // there exp(-inf) = 0 and the sum is 0, replaced by 1 so the row is 0.
  const Tensor row_max = scores.amax({-1}, true).detach();
  const Tensor e = (scores - row_max.masked_fill(row_max.eq(Scalar(-inf)), Scalar(0))).exp();
  const Tensor sum = e.sum({-1}, true);
  return e / sum.masked_fill(sum.eq(Scalar(0)), Scalar(1));
}

}  // namespace ember::attention
