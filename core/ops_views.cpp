// Views and reshaping as the user calls them. The primitive views are
// dispatched ops (kernels/view_kernels.cpp); reshape, flatten, split and
// friends are composites built from them.
#include <algorithm>

#include "core/memory_overlap.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/indexing.h"
#include "ember/ops.h"

namespace ember {

Tensor Tensor::view(IntArrayRef sizes) const { return op::view.call(*this, sizes); }

Tensor Tensor::reshape(IntArrayRef sizes) const {
  // A view when the strides allow it, else a contiguous copy.
  const DimVector shape = infer_size(sizes, numel(), "reshape", this->sizes());
  if (view_strides(this->sizes(), strides(), shape)) return op::view.call(*this, shape);
  return clone().view(shape);
}

Tensor Tensor::permute(IntArrayRef dims) const { return op::permute.call(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return op::transpose.call(*this, d0, d1); }

Tensor Tensor::t() const {
  EMBER_CHECK(dim() <= 2, "t: expects a tensor with <= 2 dims, got shape ", sizes());
  return dim() < 2 ? op::transpose.call(*this, 0, 0) : op::transpose.call(*this, 0, 1);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  EMBER_CHECK(dim() > 0, "narrow: cannot narrow a 0-d tensor");
  const int64_t wd = wrap_dim(d, dim(), "narrow");
  const int64_t n = sizes()[wd];
  if (start < 0) start += n;
  EMBER_CHECK(start >= 0 && length >= 0 && start + length <= n, "narrow: start ", start, " + length ", length,
              " exceeds dim ", wd, " of size ", n);
  return op::slice.call(*this, wd, start, start + length, 1);
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return op::slice.call(*this, d, start, end, step);
}

Tensor Tensor::select(int64_t d, int64_t index) const { return op::select.call(*this, d, index); }
Tensor Tensor::squeeze() const { return op::squeeze.call(*this); }
Tensor Tensor::squeeze(int64_t d) const { return op::squeeze_dim.call(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return op::unsqueeze.call(*this, d); }
Tensor Tensor::expand(IntArrayRef sizes) const { return op::expand.call(*this, sizes); }
Tensor Tensor::diagonal(int64_t offset, int64_t d1, int64_t d2) const {
  return op::diagonal.call(*this, offset, d1, d2);
}
Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) const {
  return op::as_strided.call(*this, sizes, strides, offset);
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) { return t.flatten(start_dim, end_dim); }

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  const int64_t s = wrap_dim(start_dim, dim(), "flatten"), e = wrap_dim(end_dim, dim(), "flatten");
  EMBER_CHECK(s <= e, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim);
  DimVector shape;
  int64_t merged = 1;
  for (int64_t i = 0; i < dim(); ++i) {
    if (i < s || i > e) {
      shape.push_back(sizes()[i]);
    } else {
      merged *= sizes()[i];
      if (i == e) shape.push_back(merged);
    }
  }
  return reshape(shape);
}

Tensor Tensor::unflatten(int64_t d, IntArrayRef parts) const {
  const int64_t wd = wrap_dim(d, dim(), "unflatten");
  EMBER_CHECK(!parts.empty(), "unflatten: sizes must not be empty");
  DimVector shape;
  for (int64_t i = 0; i < dim(); ++i) {
    if (i != wd) {
      shape.push_back(sizes()[i]);
      continue;
    }
    int64_t known = 1, infer = -1;
    for (size_t j = 0; j < parts.size(); ++j) {
      if (parts[j] == -1) infer = static_cast<int64_t>(shape.size());
      else known *= parts[j];
      shape.push_back(parts[j]);
    }
    if (infer >= 0 && known > 0) shape[infer] = sizes()[i] / known;
    int64_t prod = 1;
    for (size_t j = 0; j < parts.size(); ++j) prod *= shape[i + j];
    EMBER_CHECK(prod == sizes()[i], "unflatten: sizes ", parts, " don't multiply to the size ", sizes()[i],
                " of dim ", wd);
  }
  return view(shape);
}

TensorList Tensor::split(int64_t split_size, int64_t d) const {
  EMBER_CHECK(dim() > 0, "split: cannot split a 0-d tensor");
  const int64_t wd = wrap_dim(d, dim(), "split");
  const int64_t n = sizes()[wd];
  EMBER_CHECK(split_size > 0 || (split_size == 0 && n == 0), "split: split_size must be positive, got ", split_size);
  TensorList out;
  if (n == 0) {
    out.push_back(*this);
    return out;
  }
  for (int64_t start = 0; start < n; start += split_size) out.push_back(narrow(wd, start, std::min(split_size, n - start)));
  return out;
}

TensorList Tensor::split_with_sizes(IntArrayRef split_sizes, int64_t d) const {
  const int64_t wd = wrap_dim(d, dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0, "split_with_sizes: negative size in ", split_sizes);
    total += s;
  }
  EMBER_CHECK(total == sizes()[wd], "split_with_sizes: sizes ", split_sizes, " sum to ", total, " but dim ", wd,
              " has size ", sizes()[wd]);
  TensorList out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(wd, start, s));
    start += s;
  }
  return out;
}

TensorList Tensor::chunk(int64_t chunks, int64_t d) const {
  EMBER_CHECK(chunks > 0, "chunk: expected a positive number of chunks, got ", chunks);
  const int64_t n = sizes()[wrap_dim(d, dim(), "chunk")];
  return split(std::max<int64_t>((n + chunks - 1) / chunks, n == 0 ? 0 : 1), d);
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }
Tensor Tensor::clone() const { return op::clone.call(*this); }

// The overlap checks are the CPU kernel's too (its TensorIterator); here they
// also cover a device kernel that copies without an iterator (a memcpy).
Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  if (defined() && src.defined() && !is_same(src)) {
    assert_no_internal_overlap(*this, "copy_");
    assert_no_partial_overlap(*this, src, "copy_");
  }
  op::copy_.call(*this, src, non_blocking);
  return *this;
}
Tensor& Tensor::fill_(const Scalar& value) {
  op::fill_.call(*this, value);
  return *this;
}
Tensor& Tensor::zero_() { return fill_(0); }

namespace {

// The dims of t from the largest stride to the smallest, when that order makes
// it contiguous (t is a transpose or permute of a contiguous tensor); empty
// when t's layout has gaps or overlaps.
DimVector dims_in_memory_order(const Tensor& t) {
  DimVector dims;
  for (int64_t d = 0; d < t.dim(); ++d) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  if (!t.permute(dims).is_contiguous()) dims.clear();
  return dims;
}

}  // namespace

Tensor Tensor::to(DType t) const { return to(device(), t); }
Tensor Tensor::to(Device d) const { return to(d, dtype()); }
Tensor Tensor::to(Device d, bool non_blocking) const { return to(d, dtype(), non_blocking); }
// A dtype conversion keeps the layout of a dense permuted tensor, as
// PyTorch's preserve_format does: w.t().to(kBFloat16) is the transpose of a
// contiguous bf16 matrix. It converts the contiguous tensor the permutation
// views and permutes the result back, so the copy runs in memory order
// (TensorIterator walks dims in their logical order). Other layouts, and
// copies to another device, become contiguous.
Tensor Tensor::to(Device d, DType t, bool non_blocking) const {
  if (d == device() && t == dtype()) return *this;
  if (d == device() && !is_contiguous()) {
    const DimVector order = dims_in_memory_order(*this);
    if (!order.empty()) {
      DimVector back(order.size());
      for (size_t i = 0; i < order.size(); ++i) back[order[i]] = static_cast<int64_t>(i);
      return permute(order).to(d, t).permute(back);
    }
  }
  // As PyTorch does, a non-blocking copy to the host lands in pinned memory (else it could not be asynchronous).
  const bool pinned_out = non_blocking && d.is_cpu() && is_cuda();
  Tensor out = pinned_out ? make_empty_pinned(sizes(), t, "to") : make_empty(sizes(), t, d);
  op::copy_.call(out, *this, non_blocking);
  return out;
}

// ---- indexing ----

namespace {

// Bool (and, as in PyTorch, uint8) index tensors are masks.
bool is_mask(const Tensor& t) { return t.dtype() == DType::Bool || t.dtype() == DType::UInt8; }

// Applies the basic (view) parts of an index and collects tensor indices per
// result dim for the advanced part. Returns the view.
Tensor apply_basic_indices(const Tensor& self, const std::vector<TensorIndex>& indices, TensorList& advanced) {
  int64_t consumed = 0, ellipsis_at = -1;
  for (size_t i = 0; i < indices.size(); ++i) {
    const auto k = indices[i].kind();
    if (k == TensorIndex::Kind::Ellipsis) {
      EMBER_CHECK(ellipsis_at < 0, "index: an index can only have a single ellipsis");
      ellipsis_at = static_cast<int64_t>(i);
    } else if (k == TensorIndex::Kind::Tensor && is_mask(indices[i].tensor())) {
      consumed += indices[i].tensor().dim();
    } else if (k != TensorIndex::Kind::None && k != TensorIndex::Kind::Boolean) {
      ++consumed;
    }
  }
  EMBER_CHECK(consumed <= self.dim(), "index: too many indices for a tensor of dimension ", self.dim(), " (got ",
              consumed, ")");
  Tensor t = self;
  int64_t d = 0;  // current dim of t
  for (size_t i = 0; i < indices.size(); ++i) {
    const TensorIndex& idx = indices[i];
    switch (idx.kind()) {
      case TensorIndex::Kind::Integer:
        t = t.select(d, idx.integer());
        break;
      case TensorIndex::Kind::Slice:
        t = t.slice(d, idx.slice().start, idx.slice().stop, idx.slice().step);
        advanced.resize(d + 1);
        ++d;
        break;
      case TensorIndex::Kind::None:
        t = t.unsqueeze(d);
        advanced.resize(d + 1);
        ++d;
        break;
      case TensorIndex::Kind::Boolean:
        t = t.unsqueeze(d);
        if (!idx.boolean()) t = t.slice(d, 0, 0);
        advanced.resize(d + 1);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis: {
        const int64_t skip = self.dim() - consumed;
        advanced.resize(d + skip);
        d += skip;
        break;
      }
      case TensorIndex::Kind::Tensor: {
        const Tensor& it = idx.tensor();
        if (is_mask(it) && it.dim() == 0) {
          // A 0-d mask adds a dim of size 1 (true) or 0 (false), like a Python bool.
          t = t.unsqueeze(d);
          if (!it.item<bool>()) t = t.slice(d, 0, 0);
          advanced.resize(d + 1);
          ++d;
        } else if (is_mask(it)) {
          // A mask over the next it.dim() dims: one long index per dim.
          Tensor nz = op::nonzero.call(it);  // (n, it.dim())
          for (int64_t j = 0; j < it.dim(); ++j) {
            EMBER_CHECK(it.sizes()[j] == t.sizes()[d + j], "index: the mask of shape ", it.sizes(),
                        " does not match the indexed tensor's shape ", t.sizes(), " at dim ", d + j);
            advanced.resize(d + j + 1);
            advanced[d + j] = nz.select(1, j);
          }
          d += it.dim();
        } else {
          EMBER_CHECK(is_integral(it.dtype()), "index: tensors used as indices must be long, int, byte or bool, got ",
                      it.dtype());
          advanced.resize(d + 1);
          advanced[d] = it;
          ++d;
        }
        break;
      }
    }
  }
  return t;
}

bool has_advanced(const TensorList& adv) {
  for (const Tensor& t : adv)
    if (t.defined()) return true;
  return false;
}

}  // namespace

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index(std::vector<TensorIndex>(indices));
}

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  TensorList advanced;
  Tensor view = apply_basic_indices(*this, indices, advanced);
  if (!has_advanced(advanced)) return view;
  return op::index.call(view, advanced);
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value) {
  return index_put_(std::vector<TensorIndex>(indices), value);
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) {
  return index_put_(std::vector<TensorIndex>(indices), wrap_scalar(value).to(dtype()));
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& value) {
  TensorList advanced;
  Tensor view = apply_basic_indices(*this, indices, advanced);
  if (!has_advanced(advanced)) {
    view.copy_(value);
  } else {
    op::index_put_.call(view, advanced, value, false);
  }
  return *this;
}

}  // namespace ember
