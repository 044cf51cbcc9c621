// IValue: one boxed argument or result. A boxed call passes a Stack of them,
// which lets generic layers (tracer, profiler, `ember inspect`) handle every
// op without per-op code. Ordinary calls never box.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// The payload of an IValue that holds nothing (an omitted optional argument).
struct NoneValue {};

class IValue {
 public:
  using Payload = std::variant<NoneValue, Tensor, Scalar, int64_t, double, bool, std::vector<int64_t>, TensorList, DType,
                               std::string>;
  IValue() = default;
  IValue(Payload p) : v_(std::move(p)) {}  // NOLINT

  Payload& payload() { return v_; }
  const Payload& payload() const { return v_; }
  bool is_none() const { return std::holds_alternative<NoneValue>(v_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  bool is_tensor_list() const { return std::holds_alternative<TensorList>(v_); }
  const Tensor& tensor() const { return std::get<Tensor>(v_); }
  const TensorList& tensor_list() const { return std::get<TensorList>(v_); }
  std::string to_string() const;  // short form for traces: "Tensor[2, 3] float32", "1", "[0, 1]"

 private:
  Payload v_;
};

using Stack = std::vector<IValue>;

// Converting C++ argument and result types to and from IValues.
namespace boxing {

inline IValue box(const Tensor& t) { return IValue::Payload(t); }
inline IValue box(const Scalar& s) { return IValue::Payload(s); }
inline IValue box(int64_t v) { return IValue::Payload(v); }
inline IValue box(double v) { return IValue::Payload(v); }
inline IValue box(bool v) { return IValue::Payload(v); }
inline IValue box(DType v) { return IValue::Payload(v); }
inline IValue box(IntArrayRef v) { return IValue::Payload(v.vec()); }
inline IValue box(const TensorList& v) { return IValue::Payload(v); }
inline IValue box(std::string_view v) { return IValue::Payload(std::string(v)); }
template <class T>
IValue box(const std::optional<T>& v) {
  return v ? box(*v) : IValue();
}

template <class T> struct Unbox;
template <> struct Unbox<const Tensor&> {
  static const Tensor& get(IValue& v) { return std::get<Tensor>(v.payload()); }
};
template <> struct Unbox<Tensor> {
  static Tensor get(IValue& v) { return std::get<Tensor>(v.payload()); }
};
template <> struct Unbox<const Scalar&> {
  static const Scalar& get(IValue& v) { return std::get<Scalar>(v.payload()); }
};
template <> struct Unbox<int64_t> {
  static int64_t get(IValue& v) { return std::get<int64_t>(v.payload()); }
};
template <> struct Unbox<double> {
  static double get(IValue& v) { return std::get<double>(v.payload()); }
};
template <> struct Unbox<bool> {
  static bool get(IValue& v) { return std::get<bool>(v.payload()); }
};
template <> struct Unbox<DType> {
  static DType get(IValue& v) { return std::get<DType>(v.payload()); }
};
template <> struct Unbox<IntArrayRef> {
  static IntArrayRef get(IValue& v) { return IntArrayRef(std::get<std::vector<int64_t>>(v.payload())); }
};
template <> struct Unbox<const TensorList&> {
  static const TensorList& get(IValue& v) { return std::get<TensorList>(v.payload()); }
};
template <> struct Unbox<std::string_view> {
  static std::string_view get(IValue& v) { return std::get<std::string>(v.payload()); }
};
template <class T> struct Unbox<const std::optional<T>&> {
  static std::optional<T> get(IValue& v) {
    if (v.is_none()) return std::nullopt;
    return Unbox<T>::get(v);
  }
};
template <class T> struct Unbox<std::optional<T>> : Unbox<const std::optional<T>&> {};
template <> struct Unbox<const Scalar> : Unbox<const Scalar&> {};
template <> struct Unbox<Scalar> {
  static Scalar get(IValue& v) { return std::get<Scalar>(v.payload()); }
};

// Results: pushed onto the stack in order.
inline void push_result(Stack& s, Tensor t) { s.emplace_back(IValue::Payload(std::move(t))); }
inline void push_result(Stack& s, TensorList t) { s.emplace_back(IValue::Payload(std::move(t))); }
template <class... T>
void push_result(Stack& s, std::tuple<T...> t) {
  std::apply([&](auto&... e) { (push_result(s, std::move(e)), ...); }, t);
}

template <class R> struct PopResult;
template <> struct PopResult<Tensor> {
  static constexpr size_t kCount = 1;
  static Tensor get(IValue* v) { return std::get<Tensor>(v[0].payload()); }
};
template <> struct PopResult<TensorList> {
  static constexpr size_t kCount = 1;
  static TensorList get(IValue* v) { return std::get<TensorList>(v[0].payload()); }
};
template <> struct PopResult<std::tuple<Tensor, Tensor>> {
  static constexpr size_t kCount = 2;
  static std::tuple<Tensor, Tensor> get(IValue* v) {
    return {std::get<Tensor>(v[0].payload()), std::get<Tensor>(v[1].payload())};
  }
};
template <> struct PopResult<std::tuple<Tensor, Tensor, Tensor>> {
  static constexpr size_t kCount = 3;
  static std::tuple<Tensor, Tensor, Tensor> get(IValue* v) {
    return {std::get<Tensor>(v[0].payload()), std::get<Tensor>(v[1].payload()), std::get<Tensor>(v[2].payload())};
  }
};

}  // namespace boxing
}  // namespace ember
