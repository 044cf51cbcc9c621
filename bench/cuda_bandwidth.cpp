// The memory-bound CUDA kernels against the device's own copy engine: for each
// op (a new output each call, from the caching allocator), bytes moved per second as a fraction of a same-size device-to-device
// copy (cudaMemcpyAsync) timed in the same run, median of 15, with CUDA
// events on the current stream. Prints a table; exits 0 without a device.
//   build/release/bench/cuda_bandwidth [MiB per operand, default 256]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "ember/cuda.h"
#include "ember/ember.h"

namespace {

using ember::Tensor;
using ember_bench::median_device_ms;

struct Row {
  std::string name;
  double bytes;  // read + written
  std::function<void()> run;
};

}  // namespace

int main(int argc, char** argv) {
  if (!ember::cuda_is_available()) {
    std::printf("cuda_bandwidth: no CUDA device; nothing measured\n");
    return 0;
  }
  const int64_t mib = argc > 1 ? std::atoll(argv[1]) : 256;
  const int64_t n = mib * (int64_t{1} << 20) / 4;  // float32 elements per operand
  const auto cuda = ember::TensorOptions(ember::kFloat32).device(ember::Device::cuda());
  Tensor a = ember::rand({n}, cuda), b = ember::rand({n}, cuda), out = ember::empty({n}, cuda);
  Tensor half_out = ember::empty({n}, ember::TensorOptions(ember::kFloat16).device(ember::Device::cuda()));
  Tensor rows = a.view({n / 1024, 1024});
  const double f4 = 4.0 * static_cast<double>(n);

  const double copy_ms = median_device_ms([&] { out.copy_(a); });
  const double copy_gbs = 2 * f4 / copy_ms / 1e6;
  const std::vector<Row> table = {
      {"add (a + b)", 3 * f4, [&] { (void)(a + b); }},
      {"mul by scalar (a * 2)", 2 * f4, [&] { (void)(a * 2); }},
      {"exp", 2 * f4, [&] { (void)a.exp(); }},
      {"copy_ float32 -> float16", f4 + f4 / 2, [&] { half_out.copy_(a); }},
      {"copy_ transposed (1024 cols)", 2 * f4, [&] { out.view({1024, n / 1024}).copy_(rows.t()); }},
      {"sum (all)", f4, [&] { (void)a.sum(); }},
      {"sum (rows of 1024)", f4, [&] { (void)rows.sum({1}); }},
  };
  std::printf("device-to-device copy: %.1f GB/s (%lld MiB per operand, median of 15)\n", copy_gbs,
              static_cast<long long>(mib));
  std::printf("%-32s %10s %12s\n", "op", "GB/s", "vs copy");
  for (const Row& r : table) {
    const double ms = median_device_ms(r.run);
    const double gbs = r.bytes / ms / 1e6;
    std::printf("%-32s %10.1f %11.2fx\n", r.name.c_str(), gbs, gbs / copy_gbs);
  }
  return 0;
}
