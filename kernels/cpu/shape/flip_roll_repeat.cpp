// flip, roll and repeat on CPU: each output element is a copy of one input
// element, found by a per-dim map of coordinates.
//
// Note [Row copies]
// The output is contiguous; it is cut into rows (its last dim) and rows into
// chunks of a fixed size for the thread pool. For each row the source row is
// found by mapping each leading coordinate c of dim d:
//   flip    c -> size - 1 - c on flipped dims
//   roll    c -> (c - shift) mod size
//   repeat  c -> c mod self_size (self's shape padded with leading 1s)
// and the row itself is filled by a loop specialised per op: reversed, two
// runs split at the shift, or the source row copied repeats times. Elements
// move as raw bits (dispatch_width), so every dtype takes the same code.
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_indexing.h"
#include "kernels/cpu/index/indexing_util.h"

namespace ember {
namespace {

using cpu::sizes_1d;
using cpu::strides_1d;

// Fills `out` (contiguous, `sizes` = its shape as nonempty dims) from `src`
// (element strides `src_strides`, same rank): row r's source starts at the
// sum of coord(d, c_d) * src_strides[d] over the leading dims, and
// inner(out_row, src_row, src_stride_last, row_length) fills the row.
template <class Coord, class Inner>
void copy_rows(const Tensor& src, IntArrayRef src_strides, const Tensor& out, IntArrayRef sizes, Coord coord,
               Inner inner) {
  if (out.numel() == 0) return;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t L = sizes[nd - 1], rows = out.numel() / L, sl = src_strides[nd - 1];
  dispatch_width(out.element_size(), [&]<class U>() {
    const U* s = static_cast<const U*>(src.data_ptr());
    U* o = static_cast<U*>(out.data_ptr());
    parallel_for(0, rows, cpu::grain_for(L), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t rest = r, off = 0;
        for (int64_t d = nd - 2; d >= 0; --d) {
          off += coord(d, rest % sizes[d]) * src_strides[d];
          rest /= sizes[d];
        }
        inner(o + r * L, s + off, sl, L);
      }
    });
  });
}

Tensor new_like(const Tensor& self, IntArrayRef sizes) { return make_empty(sizes, self.dtype(), self.device()); }

// ---- flip ----

Tensor flip_cpu(const Tensor& self, IntArrayRef dims) {
  const DimVector sizes = sizes_1d(self);
  std::vector<bool> flipped(sizes.size(), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, self.dim(), "flip");
    EMBER_CHECK(!flipped[w], "flip: dim ", d, " appears more than once in dims ", dims);
    flipped[w] = true;
  }
  Tensor out = new_like(self, self.sizes());
  const bool last = flipped.back();
  copy_rows(
      self, strides_1d(self), out, sizes,
      [&](int64_t d, int64_t c) { return flipped[d] ? sizes[d] - 1 - c : c; },
      [last](auto* o, const auto* s, int64_t sl, int64_t L) {
        if (last) {
          for (int64_t j = 0; j < L; ++j) o[j] = s[(L - 1 - j) * sl];
        } else {
          for (int64_t j = 0; j < L; ++j) o[j] = s[j * sl];
        }
      });
  return out;
}

// ---- roll ----

// out[c] = src[(c - shift[d]) mod size[d]] on each dim; shifts already in [0, size).
void roll_into(const Tensor& src, IntArrayRef src_strides, const Tensor& out, IntArrayRef sizes, const DimVector& shift) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t sh = shift[nd - 1];
  copy_rows(
      src, src_strides, out, sizes,
      [&](int64_t d, int64_t c) { return c >= shift[d] ? c - shift[d] : c - shift[d] + sizes[d]; },
      [sh](auto* o, const auto* s, int64_t sl, int64_t L) {
        for (int64_t j = 0; j < sh; ++j) o[j] = s[(j - sh + L) * sl];
        for (int64_t j = sh; j < L; ++j) o[j] = s[(j - sh) * sl];
      });
}

// A shift reduced into [0, size).
int64_t wrap_shift(int64_t shift, int64_t size) {
  if (size == 0) return 0;
  const int64_t m = shift % size;
  return m < 0 ? m + size : m;
}

Tensor roll_cpu(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  EMBER_CHECK(!shifts.empty(), "roll: shifts must not be empty");
  Tensor out = new_like(self, self.sizes());
  if (dims.empty()) {
    // The flattened tensor rolls as one dim; the contiguous output has the same layout.
    EMBER_CHECK(shifts.size() == 1, "roll: without dims, shifts must hold one value (the flattened tensor is rolled), got ",
                shifts);
    const Tensor flat = self.reshape({self.numel()});
    const DimVector sizes{self.numel()};
    roll_into(flat, strides_1d(flat), out, sizes, DimVector{wrap_shift(shifts[0], self.numel())});
    return out;
  }
  EMBER_CHECK(shifts.size() == dims.size(), "roll: shifts ", shifts, " and dims ", dims,
              " must have the same length");
  const DimVector sizes = sizes_1d(self);
  DimVector shift(sizes.size(), 0);
  // A dim named twice rolls by the sum of its shifts, as in PyTorch.
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = wrap_dim(dims[k], self.dim(), "roll");
    shift[d] = wrap_shift(shift[d] + wrap_shift(shifts[k], sizes[d]), sizes[d]);
  }
  roll_into(self, strides_1d(self), out, sizes, shift);
  return out;
}

// ---- repeat ----

Tensor repeat_cpu(const Tensor& self, IntArrayRef repeats) {
  const int64_t nd = static_cast<int64_t>(repeats.size());
  EMBER_CHECK(nd >= self.dim(), "repeat: the number of repeats (", nd,
              ") must not be smaller than the number of dims of self (", self.dim(), "), got repeats ", repeats,
              " for self of shape ", self.sizes());
  // self seen with nd dims: leading 1s, stride 0.
  DimVector in_sizes(static_cast<size_t>(nd), 1), in_strides(static_cast<size_t>(nd), 0), sizes;
  for (int64_t d = 0; d < self.dim(); ++d) {
    in_sizes[nd - self.dim() + d] = self.size(d);
    in_strides[nd - self.dim() + d] = self.stride(d);
  }
  for (int64_t d = 0; d < nd; ++d) {
    EMBER_CHECK(repeats[d] >= 0, "repeat: repeats must not be negative, got ", repeats);
    sizes.push_back(in_sizes[d] * repeats[d]);
  }
  Tensor out = new_like(self, sizes);
  if (nd == 0) {  // a 0-d self repeated by (): a copy
    op::copy_.call(out, self, false);
    return out;
  }
  const int64_t p = in_sizes[nd - 1];
  copy_rows(
      self, in_strides, out, sizes, [&](int64_t d, int64_t c) { return c % in_sizes[d]; },
      [p](auto* o, const auto* s, int64_t sl, int64_t L) {
        for (int64_t b = 0; b < L; b += p) {
          for (int64_t j = 0; j < p; ++j) o[b + j] = s[j * sl];
        }
      });
  return out;
}

}  // namespace

void register_cpu_flip_roll_repeat_kernels() {
  op::flip.impl(DispatchKey::CPU, kAllDTypes, &flip_cpu, "cpu::flip");
  op::roll.impl(DispatchKey::CPU, kAllDTypes, &roll_cpu, "cpu::roll");
  op::repeat.impl(DispatchKey::CPU, kAllDTypes, &repeat_cpu, "cpu::repeat");
}

}  // namespace ember
