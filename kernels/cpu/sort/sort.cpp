// sort and topk on CPU.
//
// Note [Sort order]
// Both ops order the elements of a row by a total order: by value, NaN above
// every number (as torch), -0 equal to +0, and equal values by their index.
// With the index as the tie-break, an unstable sort already gives the stable
// order, so `stable` changes nothing here, and every row has one answer
// whatever the thread count.
// Each value becomes an unsigned integer key whose integer order is that
// value order (floats: flip the sign bit of positives, all bits of
// negatives; every NaN maps to the largest key), inverted for descending
// order. A key of up to 32 bits and the index pack into one uint64, so a row
// sorts as plain integers with std::sort (sort), or for topk with a heap of
// the k best (small k, as std::partial_sort does but without buffering the
// row) or std::nth_element; 64-bit keys sort as (key, index) pairs. Rows are
// independent and run in parallel.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {
namespace {

// Elements a chunk of rows should hold at least, so small rows share a task.
constexpr int64_t kRowsChunkElems = 16384;

// The unsigned key of T's values (floats of up to 32 bits via float).
template <class T> struct SortKey {
  using value_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
  using type = std::conditional_t<sizeof(value_t) <= 4, uint32_t, uint64_t>;

  static type of(T x) {
    const value_t v = static_cast<value_t>(x);
    if constexpr (std::is_floating_point_v<value_t>) {
      using S = std::make_signed_t<type>;
      if (std::isnan(v)) return std::numeric_limits<type>::max();
      const type bits = std::bit_cast<type>(v == 0 ? value_t(0) : v);  // -0 sorts as +0
      const type sign = type(1) << (sizeof(type) * 8 - 1);
      return static_cast<S>(bits) < 0 ? ~bits : bits | sign;
    } else if constexpr (std::is_signed_v<value_t>) {
      return static_cast<type>(v) ^ (type(1) << (sizeof(type) * 8 - 1));
    } else {
      return static_cast<type>(v);
    }
  }
};

// A row's entries in the order to sort them: key (inverted for descending)
// and index. Narrow keys pack as (key << 32 | index) into one uint64.
template <class T>
struct RowEntries {
  using key_t = typename SortKey<T>::type;
  static constexpr bool kPacked = sizeof(key_t) == 4;
  using entry_t = std::conditional_t<kPacked, uint64_t, std::pair<uint64_t, int64_t>>;

  static entry_t make(T x, int64_t i, bool invert) {
    key_t k = SortKey<T>::of(x);
    if (invert) k = ~k;
    if constexpr (kPacked) return (static_cast<uint64_t>(k) << 32) | static_cast<uint64_t>(i);
    else return {k, i};
  }
  static int64_t index(const entry_t& e) {
    if constexpr (kPacked) return static_cast<int64_t>(e & 0xffffffffu);
    else return e.second;
  }
};

// The rows of `t` along `dim`: row r starts at offset(r) (in elements) and
// steps by `stride`; rows are numbered in row-major order of the other dims.
struct RowLayout {
  DimVector sizes, strides;  // the other dims, outermost first
  int64_t length = 1, stride = 0, rows = 1;

  RowLayout(const Tensor& t, int64_t dim) {
    for (int64_t j = 0; j < t.dim(); ++j) {
      if (j == dim) continue;
      sizes.push_back(t.sizes()[j]);
      strides.push_back(t.strides()[j]);
      rows *= t.sizes()[j];
    }
    if (t.dim() > 0) {
      length = t.sizes()[dim];
      stride = t.strides()[dim];
    }
  }
  int64_t offset(int64_t r) const {
    int64_t off = 0;
    for (int64_t j = static_cast<int64_t>(sizes.size()) - 1; j >= 0; --j) {
      off += (r % sizes[j]) * strides[j];
      r /= sizes[j];
    }
    return off;
  }
};

// For every row: fills a buffer with the row's entries, calls order(buf) to
// arrange the first `keep` of them, and writes those values and indices out.
// With `heap` set, the buffer instead keeps only the `keep` least entries
// seen so far (a max-heap, for small k), then sorts them.
template <class T, class Order>
void sort_rows(const Tensor& self, int64_t dim, bool invert, int64_t keep, bool heap, Tensor& values,
               Tensor& indices, Order&& order) {
  using E = RowEntries<T>;
  const RowLayout in(self, dim), out(values, dim);
  const int64_t n = in.length;
  EMBER_CHECK(!E::kPacked || n <= (int64_t{1} << 32), "sort: rows longer than 2^32 elements are not supported, got ",
              n);
  const T* src = static_cast<const T*>(self.data_ptr());
  T* vo = values.data_ptr<T>();
  int64_t* io = indices.data_ptr<int64_t>();
  const int64_t grain = std::max<int64_t>(1, kRowsChunkElems / std::max<int64_t>(1, n));
  parallel_for(0, in.rows, grain, [&](int64_t b, int64_t e) {
    std::vector<typename E::entry_t> buf(static_cast<size_t>(heap ? keep : n));
    for (int64_t r = b; r < e; ++r) {
      const T* row = src + in.offset(r);
      if (heap) {
        for (int64_t i = 0; i < keep; ++i) buf[i] = E::make(row[i * in.stride], i, invert);
        std::make_heap(buf.begin(), buf.end());
        for (int64_t i = keep; i < n; ++i) {
          const auto x = E::make(row[i * in.stride], i, invert);
          if (!(x < buf.front())) continue;
          std::pop_heap(buf.begin(), buf.end());
          buf.back() = x;
          std::push_heap(buf.begin(), buf.end());
        }
        std::sort_heap(buf.begin(), buf.end());
      } else {
        for (int64_t i = 0; i < n; ++i) buf[i] = E::make(row[i * in.stride], i, invert);
        order(buf);
      }
      const int64_t o = out.offset(r);
      for (int64_t i = 0; i < keep; ++i) {
        const int64_t j = E::index(buf[i]);
        vo[o + i * out.stride] = row[j * in.stride];
        io[o + i * out.stride] = j;
      }
    }
  });
}

// (..., n, ...) -> values (..., n, ...), int64 indices (..., n, ...) sorted along `dim`.
TensorPair sort_cpu(const Tensor& self, int64_t dim, bool descending, bool /*stable: see Note [Sort order]*/) {
  const int64_t d = wrap_dim(dim, self.dim(), "sort");
  Tensor values = make_empty(self.sizes(), self.dtype(), self.device());
  Tensor indices = make_empty(self.sizes(), DType::Int64, self.device());
  if (self.numel() == 0) return {values, indices};
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  dispatch_dtype(self.dtype(), "sort", [&]<class T>() {
    sort_rows<T>(self, d, descending, n, false, values, indices,
                 [](auto& buf) { std::sort(buf.begin(), buf.end()); });
  });
  return {values, indices};
}

// (..., n, ...) -> the k largest (or smallest) along `dim`: values and int64 indices (..., k, ...).
TensorPair topk_cpu(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  const int64_t d = wrap_dim(dim, self.dim(), "topk");
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(k >= 0 && k <= n, "topk: k (", k, ") is out of range for dim ", d, " of size ", n, " (shape ",
              self.sizes(), ")");
  DimVector shape(self.sizes());
  if (self.dim() > 0) shape[d] = k;
  Tensor values = make_empty(shape, self.dtype(), self.device());
  Tensor indices = make_empty(shape, DType::Int64, self.device());
  if (values.numel() == 0) return {values, indices};
  const int64_t kk = self.dim() == 0 ? 1 : k;  // torch: topk of a 0-d tensor returns it, even for k = 0
  dispatch_dtype(self.dtype(), "topk", [&]<class T>() {
    // Small k: a heap of the k best while reading the row; else std::nth_element.
    sort_rows<T>(self, d, largest, kk, kk <= 64 && kk < n, values, indices, [&](auto& buf) {
      if (kk < n) std::nth_element(buf.begin(), buf.begin() + (kk - 1), buf.end());
      if (sorted) std::sort(buf.begin(), buf.begin() + kk);
    });
  });
  return {values, indices};
}

}  // namespace

// Called from register_cpu_shape_kernels (kernels/cpu/shape/shape.cpp).
void register_cpu_sort_kernels() {
  op::sort.impl(DispatchKey::CPU, kAllDTypes, &sort_cpu, "cpu::sort");
  op::topk.impl(DispatchKey::CPU, kAllDTypes, &topk_cpu, "cpu::topk");
}

}  // namespace ember
