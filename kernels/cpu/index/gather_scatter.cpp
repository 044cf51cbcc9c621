// gather, scatter (tensor and Scalar source), scatter_add, index_select and
// index_add on CPU.
//
// Note [One loop for gather and scatter]
// All six ops walk a "loop shape" L (the index's shape for gather/scatter;
// the output's for index_select; the source's for index_add) with one
// distinguished dim `dim`. At loop position (o, k) (o: the coordinates of
// every other dim, k: the position along dim) the index holds v, and the op
// moves one element between the *target* at (o with v along dim) and the
// *positional* operand at (o, k):
//   gather        out[o, k]        = self[o, v]
//   index_select  out[o, k]        = self[o, v]      (index[k]: stride 0 on o)
//   scatter       out[o, v]        = src[o, k]       (out starts as a copy of self)
//   scatter_add   out[o, v]       += src[o, k]
//   index_add     out[o, v]       += alpha * source[o, k]
// gather and index_select write each output element once: they walk the loop
// shape row-major in chunks of whole rows, so reads of the index and writes
// stream along rows (index_select of table rows becomes row copies). The
// scatters and index_add write an element (o, v) only from loop positions
// with the same o. So their work is split over o, in chunks of a fixed size,
// and each chunk runs its k in ascending order: no two threads ever write one
// element, and repeated indices add up in index order whatever the thread
// count (bitwise deterministic scatter_add/index_add, and so gather's and
// index_select's backward). When dim is the innermost dim a chunk runs
// o-major (each index row read in order); otherwise k-major over runs of at
// least 256 consecutive o, so each k touches whole cache lines.
// Copies move raw elements (dispatch_width); only the adding ops look at the
// dtype. Ids outside [0, size) raise an ember::Error naming the op, the id and
// the size, as the loop meets them.
#include <algorithm>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_indexing.h"
#include "core/scalar_convert.h"
#include "kernels/cpu/index/indexing_util.h"

namespace ember {
namespace {

using cpu::sizes_1d;
using cpu::strides_1d;

// Where the loop of Note [One loop for gather and scatter] reads and writes.
// Strides are in elements, one per loop dim; the target's entry for `dim` is
// unused (its stride along dim is `target_dim_stride`, scaled by the id).
struct IndexedLoop {
  const char* op;
  int64_t dim;
  DimVector shape;
  DimVector target_strides, index_strides, pos_strides;
  int64_t target_dim_stride;
  int64_t limit;  // the target's size along dim: ids must be in [0, limit)
};

[[noreturn]] void index_out_of_range(const char* op, int64_t id, int64_t dim, int64_t size) {
  EMBER_FAIL(op, ": index ", id, " is out of bounds for dimension ", dim, " with size ", size);
}

// The id at `at`, checked against the target's size along dim.
template <class Idx>
inline int64_t checked_id(const IndexedLoop& g, const Idx* index, int64_t at) {
  const int64_t v = static_cast<int64_t>(index[at]);
  if (v < 0 || v >= g.limit) [[unlikely]]
    index_out_of_range(g.op, v, g.dim, g.limit);
  return v;
}

// The copying ops (gather, index_select) write each output element once, so
// they walk the loop shape in row-major order, in chunks of whole rows (the
// last dim): reads and writes stream along the rows. out[pos] = in[target].
template <class U, class Idx>
void gather_rows(const IndexedLoop& g, const Idx* index, const U* in, U* out) {
  const int64_t nd = static_cast<int64_t>(g.shape.size()), dim = g.dim, last = nd - 1;
  const int64_t L = g.shape[last];
  int64_t rows = 1;
  for (int64_t d = 0; d < last; ++d) rows *= g.shape[d];
  if (rows == 0 || L == 0) return;
  const IntArrayRef lead(g.shape.data(), static_cast<size_t>(last));
  DimVector lead_t(g.target_strides);  // the target's offset over the leading dims, dim excluded
  lead_t[dim] = 0;
  const int64_t tl = dim == last ? 0 : g.target_strides[last], il = g.index_strides[last], pl = g.pos_strides[last];
  const int64_t tk = g.target_dim_stride;
  parallel_for(0, rows, cpu::grain_for(L), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const U* src = in + cpu::offset_of(r, lead, IntArrayRef(lead_t.data(), static_cast<size_t>(last)));
      const Idx* ids = index + cpu::offset_of(r, lead, IntArrayRef(g.index_strides.data(), static_cast<size_t>(last)));
      U* dst = out + cpu::offset_of(r, lead, IntArrayRef(g.pos_strides.data(), static_cast<size_t>(last)));
      if (il == 0) {  // one id for the whole row (index_select of rows): a row copy
        const U* row = src + checked_id(g, ids, 0) * tk;
        if (tl == 1 && pl == 1) {
          std::copy(row, row + L, dst);
        } else {
          for (int64_t j = 0; j < L; ++j) dst[j * pl] = row[j * tl];
        }
      } else if (tl == 0 && il == 1 && pl == 1 && tk == 1) {  // gather along a contiguous last dim
        for (int64_t j = 0; j < L; ++j) dst[j] = src[checked_id(g, ids, j)];
      } else {
        for (int64_t j = 0; j < L; ++j) dst[j * pl] = src[checked_id(g, ids, j * il) * tk + j * tl];
      }
    }
  });
}

// The writing ops (the scatters, index_add): work split over o, see the Note.
// body(target, pos) captures its pointers by value, so they stay in registers
// across its stores.
template <class Idx, class Body>
void run_by_outer(const IndexedLoop& g, const Idx* index, Body body) {
  const int64_t nd = static_cast<int64_t>(g.shape.size()), dim = g.dim;
  const int64_t K = g.shape[dim];
  DimVector outer_sizes, outer_t, outer_i, outer_p;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == dim) continue;
    outer_sizes.push_back(g.shape[d]);
    outer_t.push_back(g.target_strides[d]);
    outer_i.push_back(g.index_strides[d]);
    outer_p.push_back(g.pos_strides[d]);
  }
  int64_t O = 1;
  for (int64_t s : outer_sizes) O *= s;
  if (O == 0 || K == 0) return;
  const int64_t ik = g.index_strides[dim], pk = g.pos_strides[dim], tk = g.target_dim_stride;
  const bool o_major = dim == nd - 1;
  // k-major chunks read and write runs of consecutive o: at least 256 of them
  // (1 KB of floats), so each k touches whole cache lines, not scattered ones.
  const int64_t grain = o_major ? cpu::grain_for(K) : std::max<int64_t>(cpu::grain_for(K), 256);
  parallel_for(0, O, grain, [&](int64_t o0, int64_t o1) {
    const int64_t n = o1 - o0;
    std::vector<int64_t> t_off(n), i_off(n), p_off(n);
    for (int64_t j = 0; j < n; ++j) {
      t_off[j] = cpu::offset_of(o0 + j, outer_sizes, outer_t);
      i_off[j] = cpu::offset_of(o0 + j, outer_sizes, outer_i);
      p_off[j] = cpu::offset_of(o0 + j, outer_sizes, outer_p);
    }
    if (o_major) {
      for (int64_t j = 0; j < n; ++j) {
        const Idx* ids = index + i_off[j];
        const int64_t tb = t_off[j], pb = p_off[j];
        if (ik == 1 && pk == 1) {  // contiguous index and source rows
          for (int64_t k = 0; k < K; ++k) body(tb + checked_id(g, ids, k) * tk, pb + k);
        } else {
          for (int64_t k = 0; k < K; ++k) body(tb + checked_id(g, ids, k * ik) * tk, pb + k * pk);
        }
      }
    } else {
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < n; ++j) body(t_off[j] + checked_id(g, index, i_off[j] + k * ik) * tk, p_off[j] + k * pk);
    }
  });
}

// Calls f.template operator()<Idx>() for an int64 index, or an int32 one where allowed.
template <class F>
void dispatch_index(const Tensor& index, F&& f) {
  if (index.dtype() == DType::Int32) f.template operator()<int32_t>();
  else f.template operator()<int64_t>();
}

void check_index_dtype(const char* op, const Tensor& index, bool allow_int32) {
  EMBER_CHECK(index.dtype() == DType::Int64 || (allow_int32 && index.dtype() == DType::Int32), op,
              ": expected an int64", allow_int32 ? " or int32" : "", " index tensor, got ", index.dtype());
}

void check_same_dtype(const char* op, const Tensor& self, const char* what, const Tensor& other) {
  EMBER_CHECK(self.dtype() == other.dtype(), op, ": expected self and ", what, " to have the same dtype, got ",
              self.dtype(), " and ", other.dtype());
}

// A new contiguous copy of self: the output of the scatter family.
Tensor copy_of(const Tensor& self) {
  Tensor out = make_empty(self.sizes(), self.dtype(), self.device());
  op::copy_.call(out, self, false);
  return out;
}

// ---- gather and the scatters: index has self's rank ----

// PyTorch's rule: index has as many dims as self, is no larger than self in
// any dim but `dim`, and (scatter) no larger than src in any dim.
int64_t check_gather_shapes(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src) {
  check_index_dtype(op, index, false);
  dim = wrap_dim(dim, self.dim(), op);
  const DimVector s = sizes_1d(self), i = sizes_1d(index);
  EMBER_CHECK(i.size() == s.size(), op, ": index of shape ", index.sizes(), " must have as many dims as self of shape ",
              self.sizes());
  for (size_t d = 0; d < s.size(); ++d) {
    EMBER_CHECK(static_cast<int64_t>(d) == dim || i[d] <= s[d], op, ": index of shape ", index.sizes(),
                " must not be larger than self of shape ", self.sizes(), " in any dim but dim ", dim);
  }
  if (src != nullptr) {
    const DimVector r = sizes_1d(*src);
    EMBER_CHECK(r.size() == s.size(), op, ": src of shape ", src->sizes(), " must have as many dims as self of shape ",
                self.sizes());
    for (size_t d = 0; d < s.size(); ++d) {
      EMBER_CHECK(i[d] <= r[d], op, ": index of shape ", index.sizes(), " must not be larger than src of shape ",
                  src->sizes());
    }
  }
  return dim;
}

// The loop over index's shape with `target` indexed along dim and `pos` at the index's positions.
IndexedLoop gather_loop(const char* op, int64_t dim, const Tensor& target, const Tensor& index, const Tensor* pos) {
  const DimVector ts = strides_1d(target);
  IndexedLoop g{op, dim, sizes_1d(index), ts, strides_1d(index),
                pos != nullptr ? strides_1d(*pos) : DimVector(ts.size(), 0), ts[dim], sizes_1d(target)[dim]};
  return g;
}

Tensor gather_cpu(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = check_gather_shapes("gather", self, dim, index, nullptr);
  Tensor out = make_empty(index.sizes(), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const IndexedLoop g = gather_loop("gather", dim, self, index, &out);
  dispatch_width(self.element_size(), [&]<class U>() {
    const U* in = static_cast<const U*>(self.data_ptr());
    U* o = static_cast<U*>(out.data_ptr());
    gather_rows(g, index.data_ptr<int64_t>(), in, o);
  });
  return out;
}

Tensor scatter_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_same_dtype("scatter", self, "src", src);
  dim = check_gather_shapes("scatter", self, dim, index, &src);
  Tensor out = copy_of(self);
  if (index.numel() == 0) return out;
  const IndexedLoop g = gather_loop("scatter", dim, out, index, &src);
  dispatch_width(self.element_size(), [&]<class U>() {
    const U* s = static_cast<const U*>(src.data_ptr());
    U* o = static_cast<U*>(out.data_ptr());
    run_by_outer(g, index.data_ptr<int64_t>(), [o, s](int64_t t, int64_t p) { o[t] = s[p]; });
  });
  return out;
}

// The Scalar converted to self's dtype (checked: Note [Scalar to dtype conversion]).
template <class T>
T scalar_as(const Scalar& v, DType t) {
  return scalar_to<T>(v, t, "scatter_value");
}

Tensor scatter_value_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  dim = check_gather_shapes("scatter_value", self, dim, index, nullptr);
  Tensor out = copy_of(self);
  if (index.numel() == 0) return out;
  const IndexedLoop g = gather_loop("scatter_value", dim, out, index, nullptr);
  dispatch_dtype(self.dtype(), "scatter_value", [&]<class T>() {
    const T v = scalar_as<T>(value, self.dtype());
    T* o = static_cast<T*>(out.data_ptr());
    run_by_outer(g, index.data_ptr<int64_t>(), [o, v](int64_t t, int64_t) { o[t] = v; });
  });
  return out;
}

// o + a * s in T's arithmetic: integers wrap (no signed overflow), bool is "or".
template <class T>
T add_scaled(T o, T s, opmath_t<T> a) {
  if constexpr (std::is_same_v<T, bool>) {
    return o || (s && a);
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(o) + static_cast<U>(a) * static_cast<U>(s));
  } else {
    using M = opmath_t<T>;
    return T(static_cast<M>(o) + a * static_cast<M>(s));
  }
}

// out[target] += alpha * src[pos] over the loop, in T's arithmetic.
template <class Idx>
void accumulate(const char* op, const IndexedLoop& g, const Tensor& out, const Tensor& src, const Tensor& index,
                const Scalar& alpha) {
  dispatch_dtype(out.dtype(), op, [&]<class T>() {
    using M = opmath_t<T>;
    const M a = alpha.to<M>();
    const T* s = static_cast<const T*>(src.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    run_by_outer(g, index.data_ptr<Idx>(), [o, s, a](int64_t t, int64_t p) { o[t] = add_scaled<T>(o[t], s[p], a); });
  });
}

Tensor scatter_add_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_same_dtype("scatter_add", self, "src", src);
  dim = check_gather_shapes("scatter_add", self, dim, index, &src);
  Tensor out = copy_of(self);
  if (index.numel() == 0) return out;
  accumulate<int64_t>("scatter_add", gather_loop("scatter_add", dim, out, index, &src), out, src, index, Scalar(1));
  return out;
}

// ---- index_select and index_add: a 1-d index along dim ----

int64_t check_index_vector(const char* op, const Tensor& self, int64_t dim, const Tensor& index) {
  check_index_dtype(op, index, true);
  EMBER_CHECK(index.dim() <= 1, op, ": index must be a vector (at most 1 dim), got shape ", index.sizes());
  return wrap_dim(dim, self.dim(), op);
}

// The index's stride along dim, 0 on every other loop dim.
DimVector vector_index_strides(const Tensor& index, size_t nd, int64_t dim) {
  DimVector s(nd, 0);
  s[dim] = index.dim() == 0 ? 0 : index.stride(0);
  return s;
}

Tensor index_select_cpu(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = check_index_vector("index_select", self, dim, index);
  const int64_t n = index.numel();
  DimVector sizes(self.sizes());
  if (self.dim() == 0) {
    EMBER_CHECK(n == 1, "index_select: a 0-d self takes exactly one index, got ", n);
  } else {
    sizes[dim] = n;
  }
  Tensor out = make_empty(sizes, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const DimVector ts = strides_1d(self);
  const IndexedLoop g{"index_select", dim,       sizes_1d(out), ts, vector_index_strides(index, ts.size(), dim),
                      strides_1d(out),  ts[dim], sizes_1d(self)[dim]};
  dispatch_width(self.element_size(), [&]<class U>() {
    const U* in = static_cast<const U*>(self.data_ptr());
    U* o = static_cast<U*>(out.data_ptr());
    dispatch_index(index, [&]<class Idx>() {
      gather_rows(g, index.data_ptr<Idx>(), in, o);
    });
  });
  return out;
}

Tensor index_add_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  check_same_dtype("index_add", self, "source", source);
  dim = check_index_vector("index_add", self, dim, index);
  const DimVector s = sizes_1d(self), r = sizes_1d(source);
  EMBER_CHECK(r.size() == s.size(), "index_add: source of shape ", source.sizes(),
              " must have as many dims as self of shape ", self.sizes());
  for (size_t d = 0; d < s.size(); ++d) {
    EMBER_CHECK(static_cast<int64_t>(d) == dim || r[d] == s[d], "index_add: source of shape ", source.sizes(),
                " must match self of shape ", self.sizes(), " in every dim but dim ", dim);
  }
  EMBER_CHECK(index.numel() == r[dim], "index_add: the number of indices (", index.numel(),
              ") must equal source.size(", dim, ") = ", r[dim]);
  Tensor out = copy_of(self);
  if (source.numel() == 0) return out;
  const DimVector ts = strides_1d(out);
  const IndexedLoop g{"index_add", dim, r, ts, vector_index_strides(index, ts.size(), dim), strides_1d(source),
                      ts[dim],     s[dim]};
  dispatch_index(index, [&]<class Idx>() { accumulate<Idx>("index_add", g, out, source, index, alpha); });
  return out;
}

}  // namespace

void register_cpu_gather_scatter_kernels() {
  op::gather.impl(DispatchKey::CPU, kAllDTypes, &gather_cpu, "cpu::gather");
  op::scatter.impl(DispatchKey::CPU, kAllDTypes, &scatter_cpu, "cpu::scatter");
  op::scatter_value.impl(DispatchKey::CPU, kAllDTypes, &scatter_value_cpu, "cpu::scatter_value");
  op::scatter_add.impl(DispatchKey::CPU, kAllDTypes, &scatter_add_cpu, "cpu::scatter_add");
  op::index_select.impl(DispatchKey::CPU, kAllDTypes, &index_select_cpu, "cpu::index_select");
  op::index_add.impl(DispatchKey::CPU, kAllDTypes, &index_add_cpu, "cpu::index_add");
}

}  // namespace ember
