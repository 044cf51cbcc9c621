// What every reference kernel (kernels/reference_kernels.h) is written
// against: a tensor's values as plain doubles in row-major order, and its
// boxed arguments read with errors that name the op. A reference reads its
// inputs with read(), loops over plain indices in double (long double for
// the sums), and stores its outputs with write(), which rounds once to the
// output dtype. No views, strides or SIMD reach the reference's loops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ivalue.h"

namespace ember::reference {

// A tensor's values, row-major, widened to double (exact for the floating
// dtypes, bool and integers below 2^53).
struct Values {
  std::vector<int64_t> sizes;
  std::vector<double> v;
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const { return static_cast<int64_t>(v.size()); }
  int64_t size(int64_t d) const { return sizes[static_cast<size_t>(d)]; }
};

// Reads t through its sizes and strides, any layout. t must be a defined CPU tensor.
Values read(const Tensor& t, std::string_view op);
// A new contiguous CPU tensor of `dtype` with the given sizes holding v,
// each value rounded to the dtype as a C++ conversion does.
Tensor write(const std::vector<int64_t>& sizes, const std::vector<double>& v, DType dtype);
inline Tensor write(const Values& x, DType dtype) { return write(x.sizes, x.v, dtype); }

int64_t numel_of(const std::vector<int64_t>& sizes);
// The row-major strides of `sizes`.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);
// dim in [-n, n) made non-negative; errors name the op.
int64_t wrap_dim(int64_t dim, int64_t n, std::string_view op);

// A reference covers float32 and float64 (Note [Calling a reference kernel]).
void check_dtype(const Tensor& t, std::string_view op);

// Boxed arguments, in schema order; a wrong count or type is an ember::Error naming the op.
void check_arity(const Stack& args, size_t n, std::string_view op);
const Tensor& tensor_arg(const Stack& args, size_t i, std::string_view op);
Tensor optional_tensor_arg(const Stack& args, size_t i, std::string_view op);  // undefined for None
const TensorList& tensor_list_arg(const Stack& args, size_t i, std::string_view op);
int64_t int_arg(const Stack& args, size_t i, std::string_view op);
std::optional<int64_t> optional_int_arg(const Stack& args, size_t i, std::string_view op);
std::vector<int64_t> ints_arg(const Stack& args, size_t i, std::string_view op);
bool bool_arg(const Stack& args, size_t i, std::string_view op);
double number_arg(const Stack& args, size_t i, std::string_view op);  // a Scalar, float, int or bool
std::optional<double> optional_number_arg(const Stack& args, size_t i, std::string_view op);
std::string str_arg(const Stack& args, size_t i, std::string_view op);
std::optional<DType> optional_dtype_arg(const Stack& args, size_t i, std::string_view op);

}  // namespace ember::reference
