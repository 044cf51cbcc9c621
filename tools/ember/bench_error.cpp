// The error columns of `ember bench` (Note [How ember bench measures], step
// 3): the tuned op's output 0 against its reference kernel's on the same
// arguments, in max abs, max rel and ULP.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "ember/error.h"
#include "kernels/reference_kernels.h"
#include "tools/ember/bench.h"

namespace ember::cli::bench {
namespace {

// Maps a float's bit pattern to an integer that orders like the float:
// negative values (sign bit set) count down from zero.
int64_t ordered(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

bool is_nan_bits(uint64_t bits, int width) {
  const int exponent_bits = width == 64 ? 11 : width == 32 ? 8 : 5;
  const int mantissa_bits = width - 1 - exponent_bits;
  const uint64_t exponent = (bits >> mantissa_bits) & ((uint64_t{1} << exponent_bits) - 1);
  return exponent == (uint64_t{1} << exponent_bits) - 1 && (bits & ((uint64_t{1} << mantissa_bits) - 1)) != 0;
}

// The raw bits of element i of a contiguous CPU tensor of a 16/32/64-bit float dtype.
uint64_t bits_at(const Tensor& t, int64_t i) {
  const auto* base = static_cast<const unsigned char*>(t.data_ptr());
  uint64_t bits = 0;
  const size_t size = t.element_size();
  std::memcpy(&bits, base + static_cast<size_t>(i) * size, size);  // little-endian: the low bytes
  return bits;
}

}  // namespace

double ulp_distance_bits(uint64_t a, uint64_t b, int bits) {
  // bfloat16 has float32's 8 exponent bits: its NaN test is float32's on the widened pattern.
  const bool a_nan = is_nan_bits(a, bits), b_nan = is_nan_bits(b, bits);
  if (a_nan || b_nan) return a_nan && b_nan ? 0.0 : std::numeric_limits<double>::infinity();
  const int64_t d = ordered(a, bits) - ordered(b, bits);
  return static_cast<double>(d < 0 ? -d : d);
}

double ulp_distance(float a, float b) {
  return ulp_distance_bits(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b), 32);
}
double ulp_distance(double a, double b) {
  return ulp_distance_bits(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b), 64);
}

ErrorStats compare_outputs(const Tensor& tuned, const Tensor& reference) {
  EMBER_CHECK(tuned.sizes() == reference.sizes(), "bench: the op's output has shape ", tuned.sizes(),
              " but its reference's has ", reference.sizes());
  EMBER_CHECK(tuned.is_floating_point() && reference.is_floating_point(),
              "bench: outputs must be floating point to compare, got ", tuned.dtype(), " and ",
              reference.dtype());
  const Tensor a = tuned.to(Device::cpu()).to(tuned.dtype()).contiguous();
  const Tensor b = reference.to(Device::cpu()).to(tuned.dtype()).contiguous();
  const Tensor a64 = a.to(DType::Float64).contiguous(), b64 = b.to(DType::Float64).contiguous();
  const double* x = a64.data_ptr<double>();
  const double* y = b64.data_ptr<double>();
  // bfloat16 is the top half of a float32: its ULPs are float32's shifted by 16.
  const bool bf16 = a.dtype() == DType::BFloat16;
  const int width = bf16 ? 32 : static_cast<int>(a.element_size() * 8);
  ErrorStats s;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (x[i] == y[i]) continue;  // equal infinities too
    if (std::isnan(x[i]) || std::isnan(y[i]) || std::isinf(x[i]) || std::isinf(y[i])) {
      if (std::isnan(x[i]) && std::isnan(y[i])) continue;
      s.max_abs = s.max_rel = s.max_ulp = kInf;
      continue;
    }
    const double diff = std::fabs(x[i] - y[i]);
    s.max_abs = std::max(s.max_abs, diff);
    if (y[i] != 0) s.max_rel = std::max(s.max_rel, diff / std::fabs(y[i]));
    const uint64_t ua = bits_at(a, i) << (bf16 ? 16 : 0), ub = bits_at(b, i) << (bf16 ? 16 : 0);
    s.max_ulp = std::max(s.max_ulp, ulp_distance_bits(ua, ub, width));
  }
  return s;
}

std::optional<ErrorStats> error_against_reference(const BenchOp& op, Stack args, const Tensor& tuned) {
  const ReferenceKernel* ref = find_cpu_reference(op.op);
  if (ref == nullptr) return std::nullopt;
  bool covered = false;
  for (DType t : ref->dtypes) covered = covered || t == tuned.dtype();
  if (!covered) return std::nullopt;
  // The CPU reference checks CUDA kernels too: it gets CPU copies of the inputs.
  for (IValue& v : args)
    if (v.is_tensor() && v.tensor().defined()) v = IValue::Payload(v.tensor().to(Device::cpu()));
  const std::vector<Tensor> outputs = ref->run(args);
  EMBER_CHECK(!outputs.empty(), "bench: the reference of ", op.op, " returned no output");
  ErrorStats s = compare_outputs(tuned, outputs[0]);
  s.reference = ref->function;
  return s;
}

}  // namespace ember::cli::bench
