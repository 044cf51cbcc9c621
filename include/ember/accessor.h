// Tensor::accessor<T, N>(): element access to a CPU tensor by index, through
// its sizes and strides, as libtorch's TensorAccessor.
//
//   ember::Tensor m = ember::zeros({2, 3});
//   auto a = m.accessor<float, 2>();  // checked once: on the CPU, float32, 2 dims
//   for (int64_t i = 0; i < a.size(0); ++i)
//     for (int64_t j = 0; j < a.size(1); ++j) a[i][j] = static_cast<float>(10 * i + j);
//
// Indices are not bounds-checked (as in libtorch). The accessor borrows the
// tensor's data, sizes and strides: the tensor must outlive it, which is why
// accessor() cannot be called on a temporary.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

template <class T, size_t N>
class TensorAccessor {
  static_assert(N > 0, "TensorAccessor: N must be at least 1");

 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}

  // Index i of the first dim: the element when N == 1, else an accessor of
  // the remaining N - 1 dims.
  decltype(auto) operator[](int64_t i) const {
    if constexpr (N == 1) {
      return data_[i * strides_[0]];
    } else {
      return TensorAccessor<T, N - 1>(data_ + i * strides_[0], sizes_ + 1, strides_ + 1);
    }
  }
  int64_t size(size_t dim) const { return sizes_[dim]; }
  int64_t stride(size_t dim) const { return strides_[dim]; }
  IntArrayRef sizes() const { return IntArrayRef(sizes_, N); }
  IntArrayRef strides() const { return IntArrayRef(strides_, N); }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

template <class T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  EMBER_CHECK(defined(), "accessor<", dtype_v<T>, ", ", N, ">: the tensor is undefined");
  EMBER_CHECK(dtype() == dtype_v<T>, "accessor<", dtype_v<T>, ", ", N, ">: expected a ", dtype_v<T>,
              " tensor, got ", dtype(), " ", sizes());
  EMBER_CHECK(dim() == static_cast<int64_t>(N), "accessor<", dtype_v<T>, ", ", N, ">: expected a tensor with ", N,
              " dims, got ", dim(), " (", sizes(), ")");
  EMBER_CHECK(device().is_cpu(), "accessor<", dtype_v<T>, ", ", N, ">: expected a CPU tensor, got one on ", device(),
              " (copy it with .cpu() first)");
  return TensorAccessor<T, N>(static_cast<T*>(data_ptr()), sizes().data(), strides().data());
}

}  // namespace ember
