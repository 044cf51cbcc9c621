// Sorting and searching as the user calls them: argsort (sort's indices),
// unique and searchsorted (dispatched, kernels/cpu/sort/), bucketize
// (searchsorted with the arguments swapped).
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

Tensor argsort(const Tensor& t, int64_t dim, bool descending, bool stable) {
  return std::get<1>(op::sort.call(t, dim, descending, stable));
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted, bool return_inverse, bool return_counts,
                                          std::optional<int64_t> dim) {
  EMBER_CHECK(!dim.has_value(), "unique: only the flattened form is supported (dim=None), got dim=", dim.value_or(0),
              " for a tensor of shape ", t.sizes());
  return op::unique.call(t, sorted, return_inverse, return_counts);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    std::optional<std::string_view> side) {
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right", "searchsorted: side must be 'left' or 'right', got '", *side,
                "'");
    EMBER_CHECK(!(right && *side == "left"), "searchsorted: side 'left' contradicts right=true");
  }
  return op::searchsorted.call(sorted_sequence, values, out_int32, right || side == "right");
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool out_int32, bool right,
                    std::optional<std::string_view> side) {
  return searchsorted(sorted_sequence, wrap_scalar(value), out_int32, right, side);
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "bucketize: expected 1-D boundaries, got shape ", boundaries.sizes());
  return op::searchsorted.call(boundaries, input, out_int32, right);
}

Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize(wrap_scalar(input), boundaries, out_int32, right);
}

Tensor Tensor::argsort(int64_t dim, bool descending, bool stable) const {
  return ember::argsort(*this, dim, descending, stable);
}

std::tuple<Tensor, Tensor, Tensor> Tensor::unique(bool sorted, bool return_inverse, bool return_counts,
                                                  std::optional<int64_t> dim) const {
  return ember::unique(*this, sorted, return_inverse, return_counts, dim);
}

}  // namespace ember
