// masked_select on CPU: the elements of self where the bool mask is true,
// self and mask broadcast together, in row-major order, as a 1-d tensor.
//
// Note [Two-pass compaction]
// The broadcast shape is cut into rows (its last dim) and the rows into
// chunks of a fixed size. Pass 1 counts the true mask elements of each chunk;
// a prefix sum over the chunks (in chunk order) gives each chunk its first
// output position; pass 2 copies. Each chunk writes its own range of the
// output, so the result does not depend on the thread count.
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_indexing.h"
#include "kernels/cpu/index/indexing_util.h"

namespace ember {
namespace {

using cpu::sizes_1d;
using cpu::strides_1d;

Tensor masked_select_cpu(const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == DType::Bool, "masked_select: expected a bool mask, got ", mask.dtype());
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  const Tensor x = self.expand(shape), m = mask.expand(shape);
  const DimVector sizes = sizes_1d(x), xs = strides_1d(x), ms = strides_1d(m);
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t L = sizes[nd - 1], rows = L == 0 ? 0 : numel / L;
  const IntArrayRef lead(sizes.data(), static_cast<size_t>(nd - 1));
  const int64_t grain = cpu::grain_for(L);
  const int64_t chunks = (rows + grain - 1) / grain;
  const uint8_t* mp = static_cast<const uint8_t*>(m.data_ptr());
  const int64_t msl = ms[nd - 1];

  // Pass 1: true elements per chunk.
  std::vector<int64_t> first(static_cast<size_t>(chunks) + 1, 0);
  parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
    int64_t n = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* row = mp + cpu::offset_of(r, lead, IntArrayRef(ms.data(), lead.size()));
      for (int64_t j = 0; j < L; ++j) n += row[j * msl] != 0;
    }
    first[static_cast<size_t>(r0 / grain) + 1] = n;
  });
  for (int64_t c = 0; c < chunks; ++c) first[c + 1] += first[c];

  Tensor out = make_empty({first[chunks]}, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  // Pass 2: each chunk copies into its own range.
  dispatch_width(self.element_size(), [&]<class U>() {
    const U* xp = static_cast<const U*>(x.data_ptr());
    U* o = static_cast<U*>(out.data_ptr());
    const int64_t xsl = xs[nd - 1];
    parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
      int64_t pos = first[static_cast<size_t>(r0 / grain)];
      for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* mrow = mp + cpu::offset_of(r, lead, IntArrayRef(ms.data(), lead.size()));
        const U* xrow = xp + cpu::offset_of(r, lead, IntArrayRef(xs.data(), lead.size()));
        for (int64_t j = 0; j < L; ++j) {
          if (mrow[j * msl] != 0) o[pos++] = xrow[j * xsl];
        }
      }
    });
  });
  return out;
}

}  // namespace

void register_cpu_masked_select_kernels() {
  op::masked_select.impl(DispatchKey::CPU, kAllDTypes, &masked_select_cpu, "cpu::masked_select");
}

}  // namespace ember
