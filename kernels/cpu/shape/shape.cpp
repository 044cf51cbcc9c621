// Joining and masking on CPU: cat, tril, triu, one_hot.
//
// These kernels only move bytes (no arithmetic on values), so they work on the
// element size, not the dtype: one instantiation per width serves every dtype.
// cat of contiguous inputs of the output's dtype is a sequence of memcpys of
// contiguous blocks, cut into fixed-size chunks of the output; other inputs go
// through copy_ into their slice of the output.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {
namespace {

// Bytes per parallel chunk of a plain copy.
constexpr int64_t kCopyChunkBytes = int64_t{1} << 20;

// A 1-D tensor of shape [0]: torch.cat skips these whatever the other shapes.
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; }

// ---- cat ----

// One input's columns in each output row of the (outer, out_row) view of the output.
struct CatPiece {
  const char* src;  // null: written by copy_ instead
  int64_t col0;     // first column in the output row
  int64_t len;      // columns (elements) per row
};

// (tensors[i]: (..., n_i, ...)) -> (..., sum n_i, ...) along `dim`, in the promoted dtype.
Tensor cat_cpu(const TensorList& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  DType dtype = DType::Bool;
  int64_t ref = -1;  // the first input that is not a legacy empty tensor
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    EMBER_CHECK(t.defined(), "cat: tensor ", i, " of the list is undefined");
    EMBER_CHECK(t.dim() > 0, "cat: zero-dimensional tensor (at position ", i,
                ") cannot be concatenated; unsqueeze it or use stack");
    EMBER_CHECK(t.device() == tensors[0].device(), "cat: expected all tensors on one device, but tensor 0 is on ",
                tensors[0].device(), " and tensor ", i, " is on ", t.device());
    dtype = i == 0 ? t.dtype() : promote_types(dtype, t.dtype());
    if (ref < 0 && !is_legacy_empty(t)) ref = static_cast<int64_t>(i);
  }
  const Device device = tensors[0].device();
  if (ref < 0) return make_empty({0}, dtype, device);

  const Tensor& r = tensors[ref];
  const int64_t d = wrap_dim(dim, r.dim(), "cat");
  DimVector shape(r.sizes());
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t)) continue;
    EMBER_CHECK(t.dim() == r.dim(), "cat: tensors must have the same number of dims, but tensor ", ref,
                " has shape ", r.sizes(), " and tensor ", i, " has shape ", t.sizes());
    for (int64_t j = 0; j < r.dim(); ++j) {
      EMBER_CHECK(j == d || t.sizes()[j] == r.sizes()[j], "cat: sizes must match except in dim ", d, ", but tensor ",
                  ref, " has shape ", r.sizes(), " and tensor ", i, " has shape ", t.sizes(), " (they differ in dim ",
                  j, ")");
    }
    shape[d] += t.sizes()[d];
  }
  Tensor out = make_empty(shape, dtype, device);
  if (out.numel() == 0) return out;

  int64_t inner = 1;
  for (int64_t j = d + 1; j < out.dim(); ++j) inner *= shape[j];
  const int64_t out_row = shape[d] * inner;
  std::vector<CatPiece> pieces;
  bool any_fast = false;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (is_legacy_empty(t)) continue;
    const int64_t n = t.sizes()[d];
    if (n == 0) continue;
    if (t.dtype() == dtype && t.is_contiguous()) {
      pieces.push_back({static_cast<const char*>(t.data_ptr()), offset * inner, n * inner});
      any_fast = true;
    } else {
      op::copy_.call(op::slice.call(out, d, offset, offset + n, 1), t, false);
      pieces.push_back({nullptr, offset * inner, n * inner});
    }
    offset += n;
  }
  if (!any_fast) return out;

  // Output element p is column p % out_row of row p / out_row; each chunk walks
  // the pieces from the one holding its first column.
  const int64_t elem = static_cast<int64_t>(element_size(dtype));
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t total = out.numel();
  parallel_for(0, total, std::max<int64_t>(1, kCopyChunkBytes / elem), [&](int64_t b, int64_t e) {
    int64_t row = b / out_row, col = b % out_row;
    size_t k = static_cast<size_t>(
        std::upper_bound(pieces.begin(), pieces.end(), col, [](int64_t c, const CatPiece& p) { return c < p.col0; }) -
        pieces.begin() - 1);
    for (int64_t p = b; p < e;) {
      const CatPiece& piece = pieces[k];
      const int64_t within = col - piece.col0;
      const int64_t n = std::min(piece.len - within, e - p);
      if (piece.src != nullptr) {
        std::memcpy(dst + p * elem, piece.src + (row * piece.len + within) * elem, static_cast<size_t>(n * elem));
      }
      p += n;
      col += n;
      if (col == piece.col0 + piece.len) {
        if (++k == pieces.size()) {
          k = 0;
          col = 0;
          ++row;
        }
      }
    }
  });
  return out;
}

// ---- tril / triu ----

// (..., M, N) -> (..., M, N) with the elements above (tril) or below (triu) the
// `diagonal`-th diagonal set to zero; diagonal > 0 is above the main one.
template <bool kLower>
Tensor triangle_cpu(const Tensor& self, int64_t diagonal) {
  const char* name = kLower ? "tril" : "triu";
  EMBER_CHECK(self.dim() >= 2, name, ": expected a tensor with at least 2 dims, got shape ", self.sizes());
  Tensor out = make_empty(self.sizes(), self.dtype(), self.device());
  const int64_t nd = self.dim();
  const int64_t m = self.sizes()[nd - 2], n = self.sizes()[nd - 1];
  if (out.numel() == 0) return out;
  // Clamp so that i + diagonal cannot overflow; beyond these bounds nothing changes.
  diagonal = std::clamp<int64_t>(diagonal, -m - 1, n + 1);
  const int64_t rows = out.numel() / n;
  const int64_t row_stride = self.strides()[nd - 2], col_stride = self.strides()[nd - 1];
  dispatch_width(self.element_size(), [&]<class U>() {
    const U* src = static_cast<const U*>(self.data_ptr());
    U* dst = static_cast<U*>(out.data_ptr());
    parallel_for(0, rows, std::max<int64_t>(1, 32768 / n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t i = r % m;
        // Offset of matrix r / m over the batch dims.
        int64_t base = 0;
        for (int64_t rest = r / m, j = nd - 3; j >= 0; --j) {
          base += (rest % self.sizes()[j]) * self.strides()[j];
          rest /= self.sizes()[j];
        }
        const U* in = src + base + i * row_stride;
        U* o = dst + r * n;
        // Columns [lo, hi) keep their values, the others become zero.
        const int64_t lo = kLower ? 0 : std::clamp<int64_t>(i + diagonal, 0, n);
        const int64_t hi = kLower ? std::clamp<int64_t>(i + diagonal + 1, 0, n) : n;
        std::fill(o, o + lo, U(0));
        if (col_stride == 1) {
          std::copy(in + lo, in + hi, o + lo);
        } else {
          for (int64_t j = lo; j < hi; ++j) o[j] = in[j * col_stride];
        }
        std::fill(o + hi, o + n, U(0));
      }
    });
  });
  return out;
}

// ---- one_hot ----

// (...) int64 class ids -> (..., C) int64 with a single 1 per row.
Tensor one_hot_cpu(const Tensor& self, int64_t num_classes) {
  EMBER_CHECK(self.dtype() == DType::Int64, "one_hot: expected an int64 tensor of class indices, got ", self.dtype());
  EMBER_CHECK(num_classes >= -1, "one_hot: num_classes must be -1 (inferred) or >= 0, got ", num_classes);
  const Tensor ids = self.contiguous();
  const int64_t* p = ids.data_ptr<int64_t>();
  const int64_t n = ids.numel();
  EMBER_CHECK(n > 0 || num_classes >= 0,
              "one_hot: cannot infer the number of classes from an empty tensor; pass num_classes");
  int64_t lo = 0, hi = -1;
  if (n > 0) {
    const auto [mn, mx] = std::minmax_element(p, p + n);
    lo = *mn;
    hi = *mx;
  }
  EMBER_CHECK(lo >= 0, "one_hot: class values must be non-negative, got ", lo);
  const int64_t classes = num_classes == -1 ? hi + 1 : num_classes;
  EMBER_CHECK(hi < classes, "one_hot: class value ", hi, " is out of range for num_classes ", classes,
              " (values must be smaller than num_classes)");
  DimVector shape(self.sizes());
  shape.push_back(classes);
  Tensor out = make_empty(shape, DType::Int64, self.device());
  int64_t* o = out.data_ptr<int64_t>();
  if (classes == 0) return out;
  parallel_for(0, n, std::max<int64_t>(1, 32768 / classes), [&](int64_t b, int64_t e) {
    std::fill(o + b * classes, o + e * classes, int64_t{0});
    for (int64_t i = b; i < e; ++i) o[i * classes + p[i]] = 1;
  });
  return out;
}

}  // namespace

void register_cpu_shape_kernels() {
  op::cat.impl(DispatchKey::CPU, kAllDTypes, &cat_cpu, "cpu::cat");
  op::tril.impl(DispatchKey::CPU, kAllDTypes, &triangle_cpu<true>, "cpu::tril");
  op::triu.impl(DispatchKey::CPU, kAllDTypes, &triangle_cpu<false>, "cpu::triu");
  op::one_hot.impl(DispatchKey::CPU, {DType::Int64}, &one_hot_cpu, "cpu::one_hot");
}

}  // namespace ember
