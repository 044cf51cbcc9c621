// Attribute equality and hashing (jit/attribute.h).
#include "jit/attribute.h"

#include <bit>
#include <functional>

namespace ember::jit {
namespace {

bool same_scalar(const Scalar& a, const Scalar& b) {
  if (a.is_floating_point() != b.is_floating_point() || a.is_bool() != b.is_bool()) return false;
  if (a.is_floating_point()) return std::bit_cast<uint64_t>(a.to<double>()) == std::bit_cast<uint64_t>(b.to<double>());
  return a.to<int64_t>() == b.to<int64_t>();
}

}  // namespace

bool same_attribute(const IValue& a, const IValue& b) {
  const IValue::Payload& p = a.payload();
  const IValue::Payload& q = b.payload();
  if (p.index() != q.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(q);
        if constexpr (std::is_same_v<T, NoneValue>) return true;
        else if constexpr (std::is_same_v<T, Tensor>) return x.is_same(y);
        else if constexpr (std::is_same_v<T, TensorList>) {
          if (x.size() != y.size()) return false;
          for (size_t i = 0; i < x.size(); ++i)
            if (!x[i].is_same(y[i])) return false;
          return true;
        } else if constexpr (std::is_same_v<T, Scalar>) return same_scalar(x, y);
        else if constexpr (std::is_same_v<T, double>) return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
        else return x == y;
      },
      p);
}

size_t hash_attribute(const IValue& v) {
  size_t h = v.payload().index() * 0x9e3779b97f4a7c15ULL;
  auto mix = [&](size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Scalar>) mix(std::hash<double>{}(x.template to<double>()));
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool> || std::is_same_v<T, double> ||
                           std::is_same_v<T, std::string>)
          mix(std::hash<T>{}(x));
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          for (int64_t e : x) mix(std::hash<int64_t>{}(e));
        else if constexpr (std::is_same_v<T, DType>) mix(static_cast<size_t>(x));
      },
      v.payload());
  return h;
}

}  // namespace ember::jit
