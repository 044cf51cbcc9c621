// Small helpers shared by ops: dim wrapping, shape arithmetic, allocation.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

// Turns a possibly negative dim into [0, ndim). A 0-d tensor accepts 0 and -1.
inline int64_t wrap_dim(int64_t dim, int64_t ndim, std::string_view op) {
  const int64_t n = ndim == 0 ? 1 : ndim;
  EMBER_CHECK(dim >= -n && dim < n, op, ": dim ", dim, " is out of range for a tensor with ", ndim,
              " dims (expected a dim in [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

// Contiguous strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
// The product of sizes, checked for negative sizes and overflow (of the
// count and of every contiguous stride). Every product of sizes goes here.
int64_t checked_numel(IntArrayRef sizes, std::string_view op);
// The bytes of a contiguous tensor of `sizes` and `dtype`, checked the same way.
size_t checked_nbytes(IntArrayRef sizes, DType dtype, std::string_view op);
// The broadcast of two shapes (NumPy rules), or an error naming `op`.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, std::string_view op);

// Replaces a single -1 in `sizes` so that the product equals numel.
DimVector infer_size(IntArrayRef sizes, int64_t numel, std::string_view op, IntArrayRef self_sizes);
// Strides that let `new_sizes` view memory laid out as (sizes, strides), or
// nothing when no such strides exist (then reshape must copy).
std::optional<DimVector> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);

// A new, uninitialised, contiguous tensor.
Tensor make_empty(IntArrayRef sizes, DType dtype, Device device);
// The same in page-locked host memory (core/pinned_memory.cpp); `op` names
// the caller in the error raised when no pinned allocator is registered.
Tensor make_empty_pinned(IntArrayRef sizes, DType dtype, const char* op);
// A 0-d CPU tensor holding a Scalar, marked as a wrapped number for type
// promotion (see core/result_type.h).
Tensor wrap_scalar(const Scalar& s);
// A new tensor that views `t`'s storage with other sizes/strides/offset. It
// records `t`'s base (for autograd's in-place-on-view handling) unless the
// user turned grad mode off: a view made under NoGradGuard is a plain alias,
// as in PyTorch.
Tensor make_view(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);

// The user's grad mode (NoGradGuard, InferenceMode), as opposed to the
// Autograd key being excluded while autograd runs an op below itself.
bool& user_grad_mode();

// The name of t's grad_fn ("AddBackward0"), or empty when it has none.
// Defined by autograd (autograd/tensor_autograd.cpp), which owns the Node type.
std::string grad_fn_name(const Tensor& t);

// Marks an in-place write: bumps the version counter shared by all views.
inline void bump_version(const Tensor& t) { t.impl()->storage()->bump_version(); }

}  // namespace ember
