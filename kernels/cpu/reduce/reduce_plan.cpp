// Dim lists, result shapes and the coalesced loop geometry of CPU reductions
// (Note [Reduction geometry] in reduce_plan.h).
#include "kernels/cpu/reduce/reduce_plan.h"

#include <algorithm>
#include <array>

#include "core/tensor_util.h"

namespace ember::cpu::reduce {
namespace {

// Below this many contiguous outputs the Columns loop costs more per input
// row than it saves; the Rows loop with strided runs takes over.
constexpr int64_t kMinColumns = 16;

uint64_t all_dims(int64_t ndim) { return ndim >= 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1; }

void check_ndim(std::string_view op, const Tensor& self) {
  EMBER_CHECK(self.dim() <= kMaxDims, op, ": reductions take tensors of at most ", kMaxDims, " dims, got ", self.dim());
}

}  // namespace

uint64_t dim_mask(std::string_view op, const Tensor& self, IntArrayRef dims) {
  check_ndim(op, self);
  const int64_t nd = self.dim();
  if (dims.empty()) return all_dims(nd);
  uint64_t mask = 0;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd, op);
    const uint64_t bit = uint64_t{1} << w;
    EMBER_CHECK(!(mask & bit), op, ": dim ", w, " appears multiple times in the list of dims ", dims);
    mask |= bit;
  }
  return mask & all_dims(nd);  // a 0-d tensor has no dim to reduce
}

uint64_t one_dim_mask(std::string_view op, const Tensor& self, int64_t dim) {
  check_ndim(op, self);
  const int64_t w = wrap_dim(dim, self.dim(), op);
  return self.dim() == 0 ? 0 : uint64_t{1} << w;
}

DimVector reduced_shape(IntArrayRef sizes, uint64_t mask, bool keepdim) {
  DimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!(mask >> d & 1)) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

void check_nonempty_reduction(std::string_view op, const Tensor& self, uint64_t mask) {
  if (self.numel() != 0) return;
  for (int64_t d = 0; d < self.dim(); ++d) {
    EMBER_CHECK(!(mask >> d & 1) || self.size(d) != 0, op, ": cannot reduce over dim ", d, " of size 0 (input shape ",
                self.sizes(), "): the reduction has no identity; reduce over non-empty dims only");
  }
}

ReducePlan make_plan(IntArrayRef sizes, IntArrayRef strides, uint64_t mask) {
  ReducePlan p;
  const int nd = static_cast<int>(sizes.size());
  // Output strides: contiguous over the kept dims, in the input's dim order.
  std::array<int64_t, kMaxDims> out_stride{};
  int64_t running = 1;
  for (int d = nd - 1; d >= 0; --d) {
    if (mask >> d & 1) continue;
    out_stride[d] = running;
    running *= sizes[d];
  }
  struct Dim {
    int64_t size, in, out;
  };
  std::array<Dim, kMaxDims> kept{}, red{};
  int nk = 0, nr = 0;
  for (int d = 0; d < nd; ++d) {
    if (mask >> d & 1) {
      p.num_reduced *= sizes[d];
      if (sizes[d] != 1) red[nr++] = {sizes[d], strides[d], 0};
    } else {
      p.num_outputs *= sizes[d];
      if (sizes[d] != 1) kept[nk++] = {sizes[d], strides[d], out_stride[d]};
    }
  }
  auto by_stride = [](const Dim& a, const Dim& b) { return a.in != b.in ? a.in < b.in : a.out < b.out; };
  std::stable_sort(kept.begin(), kept.begin() + nk, by_stride);
  std::stable_sort(red.begin(), red.begin() + nr, by_stride);
  // Merge each dim into the one inside it when they are laid out as one.
  for (int i = 0; i < nk; ++i) {
    if (p.nk > 0) {
      const int j = p.nk - 1;
      if (kept[i].in == p.kin[j] * p.ksize[j] && kept[i].out == p.kout[j] * p.ksize[j]) {
        p.ksize[j] *= kept[i].size;
        continue;
      }
    }
    p.ksize[p.nk] = kept[i].size;
    p.kin[p.nk] = kept[i].in;
    p.kout[p.nk] = kept[i].out;
    ++p.nk;
  }
  for (int i = 0; i < nr; ++i) {
    if (p.nr > 0) {
      const int j = p.nr - 1;
      if (red[i].in == p.rin[j] * p.rsize[j]) {
        p.rsize[j] *= red[i].size;
        continue;
      }
    }
    p.rsize[p.nr] = red[i].size;
    p.rin[p.nr] = red[i].in;
    ++p.nr;
  }
  // The loops expect at least one dim of each kind.
  if (p.nk == 0) {
    p.ksize[0] = 1;
    p.kin[0] = 0;
    p.kout[0] = 0;
    p.nk = 1;
  }
  if (p.nr == 0) {
    p.rsize[0] = 1;
    p.rin[0] = 1;
    p.nr = 1;
  }
  const bool columns = p.rin[0] != 1 && p.kin[0] == 1 && p.ksize[0] >= kMinColumns;
  p.path = columns ? ReducePath::Columns : ReducePath::Rows;
  return p;
}

}  // namespace ember::cpu::reduce
