// Scans on CPU: cumsum and cumprod along one dim.
//
// The input is viewed as [outer, len, inner] (len the scanned dim). Each
// output element is the fold of a fixed prefix, computed by one task in
// order, so the result does not depend on the thread count. With inner == 1
// a task scans whole rows; otherwise it scans a block of adjacent columns
// together, reading and writing rows contiguously. Accumulators follow
// PyTorch's CPU kernels: int64 for integers and bool (which give int64 unless
// a dtype is passed), double for float32 and float64, float for f16/bf16.
#include <algorithm>
#include <type_traits>

#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "kernels/cpu/reduce/reduce_driver.h"
#include "kernels/cpu/reduce/reduce_ops.h"

namespace ember {

namespace {

using cpu::reduce::ceil_div;
using cpu::reduce::kChunk;

// Columns a task scans side by side when the scanned dim is not innermost.
constexpr int64_t kScanColumns = 1024;

template <class T>
using scan_acc_t =
    std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, double>, double,
                       std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, int64_t>>;

template <bool kProd>
Tensor scan_cpu(const char* name, const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  const int64_t d = wrap_dim(dim, self.dim(), name);
  const DType out_dtype = dtype ? *dtype : is_integral(self.dtype(), true) ? DType::Int64 : self.dtype();
  const Tensor in = self.to(out_dtype).contiguous();
  Tensor out = make_empty(self.sizes(), out_dtype, self.device());
  if (out.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  const int64_t len = self.dim() == 0 ? 1 : self.size(d);
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < d) outer *= self.size(i);
    if (i > d) inner *= self.size(i);
  }
  dispatch_dtype(out_dtype, name, [&]<class T>() {
    using Acc = scan_acc_t<T>;
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    auto fold = [](Acc a, T v) {
      const Acc b = static_cast<Acc>(static_cast<opmath_t<T>>(v));
      return kProd ? cpu::reduce::wrap_mul(a, b) : cpu::reduce::wrap_add(a, b);
    };
    const Acc id = kProd ? Acc(1) : Acc(0);
    if (inner == 1) {
      // (outer, len): each row scanned in order.
      parallel_for(0, outer, std::max<int64_t>(1, kChunk / len), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          const T* xr = x + o * len;
          T* yr = y + o * len;
          Acc a = id;
          for (int64_t i = 0; i < len; ++i) {
            a = fold(a, xr[i]);
            yr[i] = static_cast<T>(a);
          }
        }
      });
      return;
    }
    // (outer, len, inner): a task scans kScanColumns columns of one outer index.
    const int64_t nblocks = ceil_div(inner, kScanColumns);
    const int64_t grain = std::max<int64_t>(1, kChunk / (len * std::min(inner, kScanColumns)));
    parallel_for(0, outer * nblocks, grain, [&](int64_t b, int64_t e) {
      Acc acc[kScanColumns];
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / nblocks, j0 = (t % nblocks) * kScanColumns;
        const int64_t w = std::min(kScanColumns, inner - j0);
        std::fill(acc, acc + w, id);
        for (int64_t i = 0; i < len; ++i) {
          const T* xr = x + (o * len + i) * inner + j0;
          T* yr = y + (o * len + i) * inner + j0;
          for (int64_t j = 0; j < w; ++j) {
            acc[j] = fold(acc[j], xr[j]);
            yr[j] = static_cast<T>(acc[j]);
          }
        }
      }
    });
  });
  return out;
}

Tensor cumsum_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cpu<false>("cumsum", self, dim, dtype);
}
Tensor cumprod_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cpu<true>("cumprod", self, dim, dtype);
}

}  // namespace

void register_cpu_scan_kernels() {
  op::cumsum.impl(DispatchKey::CPU, kAllDTypes, &cumsum_cpu, "cpu::cumsum");
  op::cumprod.impl(DispatchKey::CPU, kAllDTypes, &cumprod_cpu, "cpu::cumprod");
}

}  // namespace ember
