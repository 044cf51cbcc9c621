// View ops: new sizes/strides/offset over the same storage. They touch no
// data, so one kernel serves every backend and dtype.
#include <algorithm>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"

namespace ember {
namespace {

Tensor view_kernel(const Tensor& self, IntArrayRef size) {
  DimVector sizes = infer_size(size, self.numel(), "view", self.sizes());
  auto strides = view_strides(self.sizes(), self.strides(), sizes);
  EMBER_CHECK(strides.has_value(), "view: size ", IntArrayRef(sizes),
              " is not compatible with the input's size ", self.sizes(), " and stride ", self.strides(),
              " (at least one dim spans two non-contiguous subspaces); use reshape instead");
  return make_view(self, sizes, *strides, self.storage_offset());
}

Tensor permute_kernel(const Tensor& self, IntArrayRef dims) {
  const int64_t nd = self.dim();
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == nd, "permute: expected ", nd, " dims for a tensor of shape ",
              self.sizes(), ", got ", dims);
  DimVector sizes(nd), strides(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t d = wrap_dim(dims[i], nd, "permute");
    EMBER_CHECK(!seen[d], "permute: dim ", d, " repeats in ", dims);
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor transpose_kernel(const Tensor& self, int64_t dim0, int64_t dim1) {
  // Checked first: a 0-d tensor accepts only the dims 0 and -1, as in PyTorch.
  const int64_t a = wrap_dim(dim0, self.dim(), "transpose"), b = wrap_dim(dim1, self.dim(), "transpose");
  if (self.dim() == 0) return make_view(self, {}, {}, self.storage_offset());
  DimVector sizes(self.sizes()), strides(self.strides());
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor slice_kernel(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                    int64_t step) {
  EMBER_CHECK(self.dim() > 0, "slice: cannot slice a 0-d tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "slice");
  EMBER_CHECK(step > 0, "slice: step must be positive, got ", step);
  const int64_t n = self.sizes()[d];
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes[d] = (e - s + step - 1) / step;
  strides[d] *= step;
  return make_view(self, sizes, strides, self.storage_offset() + s * self.strides()[d]);
}

Tensor select_kernel(const Tensor& self, int64_t dim, int64_t index) {
  EMBER_CHECK(self.dim() > 0, "select: cannot select from a 0-d tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "select");
  const int64_t n = self.sizes()[d];
  EMBER_CHECK(index >= -n && index < n, "select: index ", index, " is out of range for dim ", d, " of size ", n,
              " (shape ", self.sizes(), ")");
  if (index < 0) index += n;
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(d);
  strides.erase(d);
  return make_view(self, sizes, strides, self.storage_offset() + index * self.strides()[d]);
}

Tensor squeeze_kernel(const Tensor& self) {
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (self.sizes()[i] == 1) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze_dim_kernel(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "squeeze");
  if (self.dim() == 0 || self.sizes()[d] != 1) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(d);
  strides.erase(d);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze_kernel(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim() + 1, "unsqueeze");
  DimVector sizes(self.sizes()), strides(self.strides());
  const int64_t st = d < self.dim() ? sizes[d] * strides[d] : 1;
  sizes.insert(d, 1);
  strides.insert(d, st);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor expand_kernel(const Tensor& self, IntArrayRef size) {
  const int64_t nd = static_cast<int64_t>(size.size());
  EMBER_CHECK(nd >= self.dim(), "expand: the number of sizes (", nd, ") must be >= the tensor's dims (",
              self.dim(), "), got ", size, " for shape ", self.sizes());
  DimVector sizes(nd), strides(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t off = i - (nd - self.dim());
    const int64_t cur = off >= 0 ? self.sizes()[off] : 1;
    const int64_t cur_stride = off >= 0 ? self.strides()[off] : 0;
    int64_t want = size[i];
    if (want == -1) {
      EMBER_CHECK(off >= 0, "expand: -1 is not allowed for a new leading dim (size ", size, ")");
      want = cur;
    }
    EMBER_CHECK(want >= 0, "expand: invalid size ", size);
    if (cur == want) {
      sizes[i] = cur;
      strides[i] = cur_stride;
    } else {
      EMBER_CHECK(cur == 1, "expand: the expanded size ", want, " must match the existing size ", cur,
                  " at non-singleton dim ", i, " (shape ", self.sizes(), " to ", size, ")");
      sizes[i] = want;
      strides[i] = 0;
    }
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor diagonal_kernel(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_CHECK(self.dim() >= 2, "diagonal: expected a tensor with at least 2 dims, got shape ", self.sizes());
  const int64_t a = wrap_dim(dim1, self.dim(), "diagonal"), b = wrap_dim(dim2, self.dim(), "diagonal");
  EMBER_CHECK(a != b, "diagonal: dim1 and dim2 must differ, both are ", a);
  int64_t start = self.storage_offset();
  int64_t len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(self.sizes()[a], self.sizes()[b] - offset), 0);
    if (len > 0) start += offset * self.strides()[b];
  } else {
    len = std::max<int64_t>(std::min(self.sizes()[a] + offset, self.sizes()[b]), 0);
    if (len > 0) start -= offset * self.strides()[a];
  }
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i == a || i == b) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  sizes.push_back(len);
  strides.push_back(self.strides()[a] + self.strides()[b]);
  return make_view(self, sizes, strides, start);
}

Tensor as_strided_kernel(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> offset) {
  EMBER_CHECK(size.size() == stride.size(), "as_strided: size ", size, " and stride ", stride,
              " must have the same length");
  const int64_t off = offset.value_or(self.storage_offset());
  EMBER_CHECK(off >= 0, "as_strided: negative storage offset ", off);
  int64_t max_index = off;
  for (size_t i = 0; i < size.size(); ++i) {
    EMBER_CHECK(size[i] >= 0 && stride[i] >= 0, "as_strided: negative size or stride in ", size, " / ", stride);
    if (size[i] == 0) {
      max_index = -1;
      break;
    }
    max_index += (size[i] - 1) * stride[i];
  }
  const int64_t capacity = static_cast<int64_t>(self.impl()->storage()->nbytes() / self.element_size());
  EMBER_CHECK(max_index < capacity, "as_strided: size ", size, " with stride ", stride, " and offset ", off,
              " reaches element ", max_index, " but the storage holds ", capacity, " elements");
  return make_view(self, size, stride, off);
}

template <class Op, class Fn>
void register_view(Op& op, Fn fn, const char* name) {
  op.impl(DispatchKey::CPU, kAllDTypes, fn, name);
#ifdef EMBER_WITH_CUDA
  op.impl(DispatchKey::CUDA, kAllDTypes, fn, name);
#endif
}

}  // namespace

void register_cpu_view_kernels() {
  register_view(op::view, &view_kernel, "view");
  register_view(op::permute, &permute_kernel, "permute");
  register_view(op::transpose, &transpose_kernel, "transpose");
  register_view(op::slice, &slice_kernel, "slice");
  register_view(op::select, &select_kernel, "select");
  register_view(op::squeeze, &squeeze_kernel, "squeeze");
  register_view(op::squeeze_dim, &squeeze_dim_kernel, "squeeze_dim");
  register_view(op::unsqueeze, &unsqueeze_kernel, "unsqueeze");
  register_view(op::expand, &expand_kernel, "expand");
  register_view(op::diagonal, &diagonal_kernel, "diagonal");
  register_view(op::as_strided, &as_strided_kernel, "as_strided");
}

}  // namespace ember
