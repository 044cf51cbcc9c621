// split, chunk and meshgrid as free functions (torch.split, torch.chunk,
// torch.meshgrid). All return views: split and chunk narrow the tensor
// (Tensor::split and friends, core/ops_views.cpp), meshgrid expands each
// input along its own dim.
#include <utility>

#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

TensorList split(const Tensor& t, int64_t split_size, int64_t dim) { return t.split(split_size, dim); }
TensorList split(const Tensor& t, IntArrayRef split_sizes, int64_t dim) { return t.split_with_sizes(split_sizes, dim); }
TensorList split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim) {
  return t.split_with_sizes(split_sizes, dim);
}
TensorList chunk(const Tensor& t, int64_t chunks, int64_t dim) { return t.chunk(chunks, dim); }

TensorList Tensor::split(IntArrayRef split_sizes, int64_t dim) const { return split_with_sizes(split_sizes, dim); }

TensorList meshgrid(const TensorList& tensors, std::string_view indexing) {
  EMBER_CHECK(!tensors.empty(), "meshgrid: expected a non-empty list of tensors");
  EMBER_CHECK(indexing == "ij" || indexing == "xy", "meshgrid: indexing must be 'ij' or 'xy', got '", indexing, "'");
  const size_t n = tensors.size();
  DimVector shape;
  for (size_t k = 0; k < n; ++k) {
    const Tensor& t = tensors[k];
    EMBER_CHECK(t.defined(), "meshgrid: tensor ", k, " of the list is undefined");
    EMBER_CHECK(t.dim() <= 1, "meshgrid: expected 0-d or 1-d tensors, got shape ", t.sizes(), " at entry ", k);
    EMBER_CHECK(t.dtype() == tensors[0].dtype() && t.device() == tensors[0].device(),
                "meshgrid: expected tensors of one dtype and device, got ", tensors[0].dtype(), " on ",
                tensors[0].device(), " at entry 0 and ", t.dtype(), " on ", t.device(), " at entry ", k);
    shape.push_back(t.numel());
  }
  // "xy" is "ij" with the first two inputs' dims swapped (x along columns, y along rows).
  const bool xy = indexing == "xy" && n >= 2;
  if (xy) std::swap(shape[0], shape[1]);
  TensorList out;
  out.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const size_t at = xy && k < 2 ? 1 - k : k;
    DimVector line(n, 1);
    line[at] = shape[at];
    out.push_back(tensors[k].reshape(line).expand(shape));
  }
  return out;
}

}  // namespace ember
