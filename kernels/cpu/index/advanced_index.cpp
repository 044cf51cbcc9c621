// Advanced indexing on CPU: index (gather), index_put_ (scatter, optionally
// accumulating) and nonzero.
//
// Note [Advanced indexing]
// `indices` holds one entry per leading dim of self: an int64/int32 tensor, or
// an undefined tensor meaning ":" for that dim. A bool (or uint8) mask entry
// stands for as many dims as it has, and becomes one index tensor per dim
// (its nonzero() columns); a 0-d mask adds a dim of size 1 that it keeps
// (true) or empties (false), like NumPy.
// The index tensors broadcast together to a shape B. The result holds, for
// every position of B and of the dims without an index, one element of self:
// when the indexed dims are adjacent, B replaces them in place; when a ":" dim
// separates them, B goes first (NumPy's rule, as PyTorch).
//
// Both kernels walk the result as a nest of loops, outermost first: one loop
// per un-indexed dim of self (a size and a stride) and one "table" loop over
// B, whose step is looked up in a table of element offsets into self
// (sum over indexed dims of index * stride), built once with the bounds check.
// index_put_ with repeated offsets writes the last value (accumulate=false)
// or adds the values in order (accumulate=true): repeated offsets are grouped
// so that every output element is written by one task, which keeps the
// result the same for any thread count.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {
namespace {

constexpr int64_t kGrain = 32768;

bool is_mask(DType t) { return t == DType::Bool || t == DType::UInt8; }

// ---- masks -> index tensors ----

struct ExpandedIndices {
  Tensor self;       // self, with a size-1 dim added for each 0-d mask (a view)
  TensorList index;  // one entry per leading dim of `self`: int64/int32 or undefined
};

ExpandedIndices expand_masks(const char* op, const Tensor& self, const TensorList& indices) {
  ExpandedIndices ex{self, {}};
  int64_t d = 0;  // the dim of ex.self the next entry applies to
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& t = indices[i];
    if (!t.defined()) {
      ex.index.emplace_back();
      ++d;
      continue;
    }
    EMBER_CHECK(t.device() == self.device(), op, ": the index tensor at position ", i, " is on ", t.device(),
                " but the indexed tensor is on ", self.device());
    if (!is_mask(t.dtype())) {
      EMBER_CHECK(t.dtype() == DType::Int64 || t.dtype() == DType::Int32, op,
                  ": tensors used as indices must be int64, int32, uint8 or bool, got ", t.dtype(), " at position ",
                  i);
      ex.index.push_back(t);
      ++d;
      continue;
    }
    if (t.dim() == 0) {
      EMBER_CHECK(d <= ex.self.dim(), op, ": too many indices for a tensor of dimension ", self.dim());
      ex.self = ex.self.unsqueeze(d);
      Tensor keep = make_empty({t.to(DType::Bool).item<bool>() ? 1 : 0}, DType::Int64, self.device());
      if (keep.numel() == 1) *keep.data_ptr<int64_t>() = 0;
      ex.index.push_back(keep);
      ++d;
      continue;
    }
    EMBER_CHECK(d + t.dim() <= ex.self.dim(), op, ": too many indices for a tensor of dimension ", self.dim(),
                " (the mask of shape ", t.sizes(), " at position ", i, " reaches past its last dim)");
    for (int64_t j = 0; j < t.dim(); ++j) {
      EMBER_CHECK(t.sizes()[j] == ex.self.sizes()[d + j], op, ": the mask of shape ", t.sizes(), " at position ", i,
                  " does not match the indexed tensor of shape ", ex.self.sizes(), " at dim ", d + j);
    }
    const Tensor nz = op::nonzero.call(t);  // (n, t.dim())
    for (int64_t j = 0; j < t.dim(); ++j) ex.index.push_back(nz.select(1, j));
    d += t.dim();
  }
  EMBER_CHECK(d <= ex.self.dim(), op, ": too many indices for a tensor of dimension ", self.dim(), " (got ", d, ")");
  return ex;
}

// ---- the loop nest ----

struct Loop {
  int64_t size;
  int64_t stride;  // in self, in elements; unused for the table loop
  bool table;
};

struct IndexPlan {
  DimVector result_shape;
  std::vector<Loop> loops;     // outermost first, size-1 loops dropped, neighbours merged
  std::vector<int64_t> table;  // element offset into self of each position of B (row-major)
  int64_t table_size = 0;      // numel of B
};

DimVector broadcast_index_shapes(const char* op, const TensorList& index) {
  DimVector shape;
  bool first = true;
  for (const Tensor& t : index) {
    if (!t.defined()) continue;
    if (first) {
      shape = DimVector(t.sizes());
      first = false;
      continue;
    }
    const size_t nd = std::max(shape.size(), t.sizes().size());
    DimVector out(nd, 1);
    bool ok = true;
    for (size_t k = 0; k < nd; ++k) {
      const int64_t a = k < shape.size() ? shape[shape.size() - 1 - k] : 1;
      const int64_t b = k < t.sizes().size() ? t.sizes()[t.sizes().size() - 1 - k] : 1;
      ok = ok && (a == b || a == 1 || b == 1);
      out[nd - 1 - k] = a == 1 ? b : a;
    }
    if (!ok) {
      std::string shapes;
      for (const Tensor& u : index) {
        if (u.defined()) shapes += (shapes.empty() ? "" : ", ") + detail::str_cat(u.sizes());
      }
      EMBER_FAIL(op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
    }
    shape = std::move(out);
  }
  return shape;
}

// Fills plan.table: the offset sum over indexed dims, with negative indices
// wrapped and every index checked against its dim.
void build_table(const char* op, const Tensor& self, const TensorList& index, IndexPlan& plan,
                 IntArrayRef b_shape) {
  std::vector<Tensor> idx;  // int64, contiguous, shape B
  std::vector<int64_t> dims;
  for (size_t d = 0; d < index.size(); ++d) {
    if (!index[d].defined()) continue;
    idx.push_back(index[d].to(DType::Int64).expand(b_shape).contiguous());
    dims.push_back(static_cast<int64_t>(d));
  }
  const int64_t nb = plan.table_size;
  plan.table.assign(static_cast<size_t>(nb), 0);
  const int64_t nchunks = (nb + kGrain - 1) / kGrain;
  // Per chunk: the first bad (position, index number), or -1.
  std::vector<std::pair<int64_t, size_t>> bad(static_cast<size_t>(nchunks), {-1, 0});
  std::vector<const int64_t*> data;
  std::vector<int64_t> sizes, strides;
  for (size_t k = 0; k < idx.size(); ++k) {
    data.push_back(idx[k].data_ptr<int64_t>());
    sizes.push_back(self.sizes()[dims[k]]);
    strides.push_back(self.strides()[dims[k]]);
  }
  parallel_for(0, nb, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      int64_t off = 0;
      for (size_t k = 0; k < data.size(); ++k) {
        int64_t v = data[k][p];
        if (v < -sizes[k] || v >= sizes[k]) {
          bad[static_cast<size_t>(b / kGrain)] = {p, k};
          return;
        }
        if (v < 0) v += sizes[k];
        off += v * strides[k];
      }
      plan.table[static_cast<size_t>(p)] = off;
    }
  });
  for (const auto& [p, k] : bad) {
    if (p < 0) continue;
    EMBER_FAIL(op, ": index ", idx[k].data_ptr<int64_t>()[p], " is out of bounds for dim ", dims[k], " with size ",
               self.sizes()[dims[k]]);
  }
}

IndexPlan make_plan(const char* op, const Tensor& self, const TensorList& index) {
  IndexPlan plan;
  const DimVector b_shape = broadcast_index_shapes(op, index);
  plan.table_size = 1;
  for (int64_t s : b_shape) plan.table_size *= s;
  std::vector<int64_t> indexed;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d].defined()) indexed.push_back(static_cast<int64_t>(d));
  }
  const bool adjacent = indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
  std::vector<Loop> loops;
  auto add_dim = [&](int64_t d) {
    plan.result_shape.push_back(self.sizes()[d]);
    loops.push_back({self.sizes()[d], self.strides()[d], false});
  };
  auto add_table = [&]() {
    for (int64_t s : b_shape) plan.result_shape.push_back(s);
    loops.push_back({plan.table_size, 0, true});
  };
  auto is_indexed = [&](int64_t d) { return d < static_cast<int64_t>(index.size()) && index[d].defined(); };
  if (!adjacent) add_table();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (adjacent && d == indexed.front()) add_table();
    if (!is_indexed(d)) add_dim(d);
  }
  // Drop size-1 dims (the table stays: it holds offsets) and merge neighbours
  // that step through memory as one.
  for (const Loop& l : loops) {
    if (l.size == 1 && !l.table) continue;
    if (!plan.loops.empty() && !l.table && !plan.loops.back().table &&
        plan.loops.back().stride == l.size * l.stride) {
      plan.loops.back() = {plan.loops.back().size * l.size, l.stride, false};
      continue;
    }
    plan.loops.push_back(l);
  }
  build_table(op, self, index, plan, b_shape);
  return plan;
}

// Walks positions [begin, end) of the loop nest (row-major) in runs along the
// innermost loop: run(pos, counters, n) with counters[i] the position in loop i.
template <class Run>
void walk(const std::vector<Loop>& loops, int64_t begin, int64_t end, Run&& run) {
  const size_t nl = loops.size();
  std::vector<int64_t> counter(nl);
  int64_t rest = begin;
  for (size_t i = nl; i-- > 0;) {
    counter[i] = rest % loops[i].size;
    rest /= loops[i].size;
  }
  const int64_t inner = loops[nl - 1].size;
  for (int64_t p = begin; p < end;) {
    const int64_t n = std::min(inner - counter[nl - 1], end - p);
    run(p, counter.data(), n);
    p += n;
    counter[nl - 1] += n;
    for (size_t i = nl - 1; i > 0 && counter[i] == loops[i].size; --i) {
      counter[i] = 0;
      ++counter[i - 1];
    }
  }
}

// Offset of loop position `counter` in self, leaving out the innermost loop.
inline int64_t outer_offset(const std::vector<Loop>& loops, const int64_t* counter, const int64_t* table) {
  int64_t off = 0;
  for (size_t i = 0; i + 1 < loops.size(); ++i) off += loops[i].table ? table[counter[i]] : counter[i] * loops[i].stride;
  return off;
}

bool any_defined(const TensorList& index) {
  return std::any_of(index.begin(), index.end(), [](const Tensor& t) { return t.defined(); });
}

// ---- index ----

// self (..., d_i, ...) with index tensors -> the gathered result (Note [Advanced indexing]).
Tensor index_cpu(const Tensor& self, const TensorList& indices) {
  const ExpandedIndices ex = expand_masks("index", self, indices);
  if (!any_defined(ex.index)) return op::clone.call(ex.self);
  const IndexPlan plan = make_plan("index", ex.self, ex.index);
  Tensor out = make_empty(plan.result_shape, self.dtype(), self.device());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const Loop& last = plan.loops.back();
  const int64_t* table = plan.table.data();
  dispatch_width(self.element_size(), [&]<class U>() {
    const U* src = static_cast<const U*>(ex.self.data_ptr());
    U* dst = static_cast<U*>(out.data_ptr());
    parallel_for(0, total, kGrain, [&](int64_t b, int64_t e) {
      walk(plan.loops, b, e, [&](int64_t p, const int64_t* counter, int64_t n) {
        const U* in = src + outer_offset(plan.loops, counter, table);
        U* o = dst + p;
        const int64_t c = counter[plan.loops.size() - 1];
        if (last.table) {
          for (int64_t i = 0; i < n; ++i) o[i] = in[table[c + i]];
        } else if (last.stride == 1) {
          std::memcpy(o, in + c, static_cast<size_t>(n) * sizeof(U));
        } else {
          for (int64_t i = 0; i < n; ++i) o[i] = in[(c + i) * last.stride];
        }
      });
    });
  });
  return out;
}

// ---- index_put_ ----

// Positions of B grouped by the offset they write: group g writes offset
// `offset[g]` from positions members[start[g] .. start[g + 1]), in increasing order.
struct Groups {
  std::vector<int64_t> offset, start, members;
  bool trivial = true;  // every offset distinct: group g is position g
};

Groups group_offsets(const std::vector<int64_t>& table) {
  Groups g;
  const size_t n = table.size();
  bool increasing = true;
  for (size_t i = 1; i < n && increasing; ++i) increasing = table[i - 1] < table[i];
  if (increasing) return g;
  // (offset, position) pairs sort into groups, positions increasing within
  // each; when both fit in 32 bits they sort packed into one integer.
  g.trivial = false;
  g.members.resize(n);
  auto add = [&](size_t i, int64_t offset, int64_t position) {
    g.members[i] = position;
    if (i == 0 || offset != g.offset.back()) {
      g.offset.push_back(offset);
      g.start.push_back(static_cast<int64_t>(i));
    }
  };
  const auto [lo, hi] = std::minmax_element(table.begin(), table.end());
  if (*lo >= 0 && *hi < (int64_t{1} << 32) && n < (size_t{1} << 32)) {
    std::vector<uint64_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint64_t>(table[i]) << 32 | i;
    std::sort(order.begin(), order.end());
    for (size_t i = 0; i < n; ++i) add(i, static_cast<int64_t>(order[i] >> 32), static_cast<int64_t>(order[i] & 0xffffffffu));
  } else {
    std::vector<std::pair<int64_t, int64_t>> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = {table[i], static_cast<int64_t>(i)};
    std::sort(order.begin(), order.end());
    for (size_t i = 0; i < n; ++i) add(i, order[i].first, order[i].second);
  }
  g.start.push_back(static_cast<int64_t>(n));
  return g;
}

template <class T>
inline T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else return static_cast<T>(a + b);
}

// Writes `values` (broadcast to the indexed shape) at the indexed positions of self.
Tensor index_put_cpu(const Tensor& self, const TensorList& indices, const Tensor& values, bool accumulate) {
  EMBER_CHECK(values.device() == self.device(), "index_put_: values are on ", values.device(),
              " but self is on ", self.device());
  const ExpandedIndices ex = expand_masks("index_put_", self, indices);
  if (!any_defined(ex.index)) {
    // Nothing indexed: every element of self is the target.
    const IntArrayRef shape = ex.self.sizes();
    EMBER_CHECK(values.dim() <= ex.self.dim(), "index_put_: shape mismatch: value tensor of shape ", values.sizes(),
                " cannot be broadcast to indexing result of shape ", shape);
    const Tensor src = values.expand(shape);
    if (accumulate) op::add_.call(ex.self, src, 1);
    else op::copy_.call(ex.self, src, false);
    bump_version(self);
    return self;
  }
  const IndexPlan plan = make_plan("index_put_", ex.self, ex.index);
  const IntArrayRef shape = plan.result_shape;
  bool fits = values.dim() <= static_cast<int64_t>(shape.size());
  for (int64_t k = 1; fits && k <= values.dim(); ++k) {
    const int64_t v = values.sizes()[values.dim() - k];
    fits = v == 1 || v == shape[shape.size() - k];
  }
  EMBER_CHECK(fits, "index_put_: shape mismatch: value tensor of shape ", values.sizes(),
              " cannot be broadcast to indexing result of shape ", shape);
  bump_version(self);
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  if (total == 0) return self;

  // Values as a contiguous tensor of the result's shape (or one element), not aliasing self.
  Tensor vals = values.to(self.dtype());
  const bool scalar = vals.numel() == 1;
  if (scalar) vals = vals.reshape({1});
  else vals = vals.expand(shape);
  if (!vals.is_contiguous() || vals.impl()->storage().get() == self.impl()->storage().get()) vals = vals.clone();

  // Loop nest with the table loop replaced by the groups; value strides follow
  // the result's (contiguous) layout, 0 everywhere for a single value.
  const Groups groups = group_offsets(plan.table);
  std::vector<Loop> loops = plan.loops;
  std::vector<int64_t> vstride(loops.size());
  int64_t tvs = 0;  // value stride of the table loop
  for (size_t i = loops.size(), acc = 1; i-- > 0;) {
    vstride[i] = scalar ? 0 : static_cast<int64_t>(acc);
    acc *= static_cast<size_t>(loops[i].size);
    if (loops[i].table) {
      tvs = vstride[i];
      if (!groups.trivial) loops[i].size = static_cast<int64_t>(groups.offset.size());
    }
  }
  int64_t positions = 1;
  for (const Loop& l : loops) positions *= l.size;
  const int64_t* group_offset = groups.trivial ? plan.table.data() : groups.offset.data();
  // Group g's positions of B: member_at(i) for i in group_range(g) = [begin, end).
  const int64_t* member = groups.members.data();
  auto group_range = [&](int64_t g) -> std::pair<int64_t, int64_t> {
    if (groups.trivial) return {g, g + 1};
    return {groups.start[g], groups.start[g + 1]};
  };
  auto member_at = [&](int64_t i) { return groups.trivial ? i : member[i]; };

  dispatch_dtype(self.dtype(), "index_put_", [&]<class T>() {
    using M = opmath_t<T>;
    T* dst = static_cast<T*>(ex.self.data_ptr());
    const T* v = vals.data_ptr<T>();
    // n elements of self at d[i * ds] from group g's values at vb + member * tvs + i * vs.
    auto put_run = [&](T* d, int64_t ds, int64_t vb, int64_t vs, int64_t g, int64_t n) {
      const auto [mb, me] = group_range(g);
      if (!accumulate) {
        const T* src = v + vb + member_at(me - 1) * tvs;
        for (int64_t i = 0; i < n; ++i) d[i * ds] = src[i * vs];
      } else if constexpr (std::is_same_v<T, M>) {
        for (int64_t m = mb; m < me; ++m) {
          const T* src = v + vb + member_at(m) * tvs;
          for (int64_t i = 0; i < n; ++i) d[i * ds] = add_values<T>(d[i * ds], src[i * vs]);
        }
      } else {  // f16/bf16: sum in float, round once
        for (int64_t i = 0; i < n; ++i) {
          M acc = static_cast<M>(d[i * ds]);
          for (int64_t m = mb; m < me; ++m) acc += static_cast<M>(v[vb + member_at(m) * tvs + i * vs]);
          d[i * ds] = static_cast<T>(acc);
        }
      }
    };
    const size_t nl = loops.size();
    const Loop& last = loops[nl - 1];
    parallel_for(0, positions, kGrain, [&](int64_t b, int64_t e) {
      walk(loops, b, e, [&](int64_t, const int64_t* counter, int64_t n) {
        int64_t base = 0, vbase = 0, g = 0;
        for (size_t i = 0; i + 1 < nl; ++i) {
          if (loops[i].table) {
            g = counter[i];
            base += group_offset[g];
          } else {
            base += counter[i] * loops[i].stride;
            vbase += counter[i] * vstride[i];
          }
        }
        const int64_t c = counter[nl - 1];
        if (last.table) {
          for (int64_t i = 0; i < n; ++i) put_run(dst + base + group_offset[c + i], 1, vbase, 0, c + i, 1);
        } else {
          put_run(dst + base + c * last.stride, last.stride, vbase + c * vstride[nl - 1], vstride[nl - 1], g, n);
        }
      });
    });
  });
  return self;
}

// ---- nonzero ----

// (d_0, ..., d_{n-1}) -> (count, n) int64: the coordinates of the nonzero
// elements, row-major. Two passes over fixed chunks of rows of the last dim:
// count per chunk, then each chunk writes from its prefix-sum position.
Tensor nonzero_cpu(const Tensor& self) {
  const int64_t nd = self.dim();
  Tensor out;
  dispatch_dtype(self.dtype(), "nonzero", [&]<class T>() {
    const T* src = static_cast<const T*>(self.data_ptr());
    auto nonzero = [](T x) -> bool {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(x) != 0.0f;
      else return x != T(0);
    };
    if (nd == 0) {
      out = make_empty({nonzero(*src) ? 1 : 0, 0}, DType::Int64, self.device());
      return;
    }
    const int64_t inner = self.sizes()[nd - 1], is = self.strides()[nd - 1];
    const int64_t rows = inner == 0 ? 0 : self.numel() / inner;
    // Offset of row r in self; coords[0 .. nd-2] receive its position.
    auto row_start = [&](int64_t r, int64_t* coords) {
      int64_t off = 0;
      for (int64_t j = nd - 2; j >= 0; --j) {
        const int64_t c = r % self.sizes()[j];
        r /= self.sizes()[j];
        off += c * self.strides()[j];
        if (coords != nullptr) coords[j] = c;
      }
      return off;
    };
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, inner));
    const int64_t nchunks = (rows + grain - 1) / grain;
    std::vector<int64_t> counts(static_cast<size_t>(nchunks) + 1, 0);
    parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      int64_t c = 0;
      for (int64_t r = b; r < e; ++r) {
        const T* row = src + row_start(r, nullptr);
        if (is == 1) {
          for (int64_t i = 0; i < inner; ++i) c += nonzero(row[i]);
        } else {
          for (int64_t i = 0; i < inner; ++i) c += nonzero(row[i * is]);
        }
      }
      counts[static_cast<size_t>(b / grain) + 1] = c;
    });
    std::partial_sum(counts.begin(), counts.end(), counts.begin());
    out = make_empty({counts.back(), nd}, DType::Int64, self.device());
    int64_t* o = out.data_ptr<int64_t>();
    parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      int64_t* w = o + counts[static_cast<size_t>(b / grain)] * nd;
      DimVector coords(static_cast<size_t>(nd));
      for (int64_t r = b; r < e; ++r) {
        const T* row = src + row_start(r, coords.data());
        for (int64_t i = 0; i < inner; ++i) {
          if (!nonzero(row[i * is])) continue;
          for (int64_t j = 0; j + 1 < nd; ++j) *w++ = coords[j];
          *w++ = i;
        }
      }
    });
  });
  return out;
}

}  // namespace

void register_cpu_advanced_index_kernels() {
  op::index.impl(DispatchKey::CPU, kAllDTypes, &index_cpu, "cpu::index");
  op::index_put_.impl(DispatchKey::CPU, kAllDTypes, &index_put_cpu, "cpu::index_put_");
  op::nonzero.impl(DispatchKey::CPU, kAllDTypes, &nonzero_cpu, "cpu::nonzero");
}

}  // namespace ember
