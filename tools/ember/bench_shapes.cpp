// `ember bench --shapes` and `--dtype`: the parsers of the two value-bearing options.
#include <charconv>

#include "ember/error.h"
#include "tools/ember/bench.h"

namespace ember::cli::bench {
namespace {

// Splits on `sep`, keeping empty parts (so "8,,9" is an error, not "8,9").
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

constexpr const char* kShapesHelp = "shapes are sizes joined by 'x', separated by commas, e.g. 256x256x256,8x3";

}  // namespace

std::vector<std::vector<int64_t>> parse_shapes(const std::string& spec) {
  EMBER_CHECK(!spec.empty(), "bench: --shapes is empty (", kShapesHelp, ")");
  std::vector<std::vector<int64_t>> shapes;
  for (const std::string& part : split(spec, ',')) {
    EMBER_CHECK(!part.empty(), "bench: --shapes '", spec, "' has an empty shape (", kShapesHelp, ")");
    std::vector<int64_t> dims;
    for (const std::string& size : split(part, 'x')) {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), v);
      EMBER_CHECK(!size.empty() && ec == std::errc() && end == size.data() + size.size(), "bench: --shapes '",
                  spec, "': '", size, "' in '", part, "' is not a size (", kShapesHelp, ")");
      EMBER_CHECK(v > 0, "bench: --shapes '", spec, "': sizes must be positive, got ", v, " in '", part, "'");
      dims.push_back(v);
    }
    shapes.push_back(std::move(dims));
  }
  return shapes;
}

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

DType parse_dtype(const std::string& name) {
  static const std::pair<const char*, DType> kNames[] = {
      {"float32", DType::Float32},   {"f32", DType::Float32},  {"float64", DType::Float64},
      {"f64", DType::Float64},       {"bfloat16", DType::BFloat16}, {"bf16", DType::BFloat16},
      {"float16", DType::Float16},   {"f16", DType::Float16}};
  for (const auto& [n, t] : kNames)
    if (name == n) return t;
  EMBER_FAIL("bench: unknown dtype '", name, "' (dtypes: float32 (f32), float64 (f64), bfloat16 (bf16), ",
             "float16 (f16))");
}

}  // namespace ember::cli::bench
