// Host values and boxed arguments for the reference kernels (reference_values.h).
#include "kernels/reference_values.h"

#include "core/dtype_dispatch.h"
#include "ember/ops.h"

namespace ember::reference {

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
  return strides;
}

int64_t wrap_dim(int64_t dim, int64_t n, std::string_view op) {
  const int64_t range = n == 0 ? 1 : n;  // a 0-d tensor takes dim 0 and -1
  EMBER_CHECK(dim >= -range && dim < range, op, ": dim ", dim, " is out of range for a tensor of ", n, " dims");
  return dim < 0 ? dim + range : dim;
}

Values read(const Tensor& t, std::string_view op) {
  EMBER_CHECK(t.defined(), op, ": the reference got an undefined tensor");
  EMBER_CHECK(!t.is_cuda(), op, ": the reference runs on the CPU, got a tensor on ", t.device());
  Values out{t.sizes().vec(), std::vector<double>(static_cast<size_t>(t.numel()))};
  const std::vector<int64_t> strides = t.strides().vec();
  const size_t n = out.sizes.size();
  dispatch_dtype(t.dtype(), "reference read", [&]<class T>() {
    const T* data = static_cast<const T*>(t.data_ptr());
    std::vector<int64_t> idx(n, 0);
    for (int64_t k = 0; k < out.numel(); ++k) {
      int64_t offset = 0;
      for (size_t d = 0; d < n; ++d) offset += idx[d] * strides[d];
      out.v[static_cast<size_t>(k)] = static_cast<double>(data[offset]);
      for (size_t d = n; d-- > 0;) {  // the next row-major index
        if (++idx[d] < out.sizes[d]) break;
        idx[d] = 0;
      }
    }
  });
  return out;
}

Tensor write(const std::vector<int64_t>& sizes, const std::vector<double>& v, DType dtype) {
  EMBER_CHECK(numel_of(sizes) == static_cast<int64_t>(v.size()), "reference write: ", v.size(),
              " values for a tensor of sizes ", IntArrayRef(sizes));
  Tensor out = empty(sizes, TensorOptions(dtype));
  dispatch_dtype(dtype, "reference write", [&]<class T>() {
    T* data = static_cast<T*>(out.data_ptr());
    for (size_t k = 0; k < v.size(); ++k) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        data[k] = T(static_cast<float>(v[k]));
      else
        data[k] = static_cast<T>(v[k]);
    }
  });
  return out;
}

void check_dtype(const Tensor& t, std::string_view op) {
  EMBER_CHECK(t.dtype() == DType::Float32 || t.dtype() == DType::Float64, op,
              ": the reference kernel covers float32 and float64, got ", t.dtype());
}

namespace {

const IValue& arg(const Stack& args, size_t i, std::string_view op) {
  EMBER_CHECK(i < args.size(), op, ": the reference expects argument ", i, ", got ", args.size(), " arguments");
  return args[i];
}

template <class T>
const T& typed_arg(const Stack& args, size_t i, std::string_view op, const char* expected) {
  const T* v = std::get_if<T>(&arg(args, i, op).payload());
  EMBER_CHECK(v != nullptr, op, ": argument ", i, " of the reference must be ", expected, ", got ",
              args[i].to_string());
  return *v;
}

}  // namespace

void check_arity(const Stack& args, size_t n, std::string_view op) {
  EMBER_CHECK(args.size() == n, op, ": the reference takes the op's ", n, " boxed arguments, got ", args.size());
}

const Tensor& tensor_arg(const Stack& args, size_t i, std::string_view op) {
  const Tensor& t = typed_arg<Tensor>(args, i, op, "a Tensor");
  EMBER_CHECK(t.defined(), op, ": argument ", i, " of the reference is an undefined tensor");
  return t;
}

Tensor optional_tensor_arg(const Stack& args, size_t i, std::string_view op) {
  if (arg(args, i, op).is_none()) return Tensor();
  return typed_arg<Tensor>(args, i, op, "a Tensor or None");
}

const TensorList& tensor_list_arg(const Stack& args, size_t i, std::string_view op) {
  return typed_arg<TensorList>(args, i, op, "a list of tensors");
}

int64_t int_arg(const Stack& args, size_t i, std::string_view op) {
  const IValue::Payload& p = arg(args, i, op).payload();
  if (const auto* s = std::get_if<Scalar>(&p)) return s->to_int();
  return typed_arg<int64_t>(args, i, op, "an int");
}

std::optional<int64_t> optional_int_arg(const Stack& args, size_t i, std::string_view op) {
  if (arg(args, i, op).is_none()) return std::nullopt;
  return int_arg(args, i, op);
}

std::vector<int64_t> ints_arg(const Stack& args, size_t i, std::string_view op) {
  return typed_arg<std::vector<int64_t>>(args, i, op, "a list of ints");
}

bool bool_arg(const Stack& args, size_t i, std::string_view op) { return typed_arg<bool>(args, i, op, "a bool"); }

double number_arg(const Stack& args, size_t i, std::string_view op) {
  const IValue::Payload& p = arg(args, i, op).payload();
  if (const auto* s = std::get_if<Scalar>(&p)) return s->to_double();
  if (const auto* d = std::get_if<double>(&p)) return *d;
  if (const auto* n = std::get_if<int64_t>(&p)) return static_cast<double>(*n);
  return typed_arg<bool>(args, i, op, "a number") ? 1.0 : 0.0;
}

std::optional<double> optional_number_arg(const Stack& args, size_t i, std::string_view op) {
  if (arg(args, i, op).is_none()) return std::nullopt;
  return number_arg(args, i, op);
}

std::string str_arg(const Stack& args, size_t i, std::string_view op) {
  return typed_arg<std::string>(args, i, op, "a string");
}

std::optional<DType> optional_dtype_arg(const Stack& args, size_t i, std::string_view op) {
  if (arg(args, i, op).is_none()) return std::nullopt;
  return typed_arg<DType>(args, i, op, "a dtype or None");
}

}  // namespace ember::reference
