// Shape arithmetic shared by view ops and reshape.
#include <optional>

#include "core/tensor_util.h"

namespace ember {

// Replaces a single -1 in `sizes` so the product equals numel.
DimVector infer_size(IntArrayRef sizes, int64_t numel, std::string_view op, IntArrayRef self_sizes) {
  DimVector out(sizes);
  int64_t known = 1;
  int infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      EMBER_CHECK(infer_at < 0, op, ": only one dimension can be inferred (-1), got size ", sizes);
      infer_at = static_cast<int>(i);
    } else {
      EMBER_CHECK(out[i] >= 0, op, ": invalid size ", sizes, " (negative dimension ", out[i], ")");
      EMBER_CHECK(!__builtin_mul_overflow(known, out[i], &known), op, ": size ", sizes,
                  " has too many elements (more than 2^63)");
    }
  }
  if (infer_at >= 0) {
    EMBER_CHECK(known != 0 && numel % known == 0, op, ": shape ", sizes, " is invalid for input of size ", numel,
                " (shape ", self_sizes, ")");
    out[infer_at] = numel / known;
  } else {
    EMBER_CHECK(known == numel, op, ": shape ", sizes, " is invalid for input of size ", numel, " (shape ",
                self_sizes, ")");
  }
  checked_numel(out, op);  // an empty tensor's new strides must fit too
  return out;
}

// Strides that let `new_sizes` view memory laid out as (sizes, strides), or
// nothing when no such strides exist (then reshape must copy). Groups of old
// dims that are contiguous with each other can be re-split freely.
std::optional<DimVector> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes) {
  DimVector out(new_sizes.size());
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return contiguous_strides(new_sizes);
  if (sizes.empty()) return DimVector(new_sizes.size(), 1);  // a 0-d tensor: only size-1 dims
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    // End of a contiguous chunk of old dims?
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace ember
