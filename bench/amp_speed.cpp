// Mixed precision on the CPU: bf16 against float32, medians of repeated calls.
//   - linear (with bias) in float32 and under amp::autocast(kBFloat16);
//   - conv2d (with bias) forward, and forward plus the input, weight and bias
//     gradients, on bf16 tensors against float32 ones.
// Prints f32 time / bf16 time per case on 1 and 2 threads (docs/amp.md).
//   build/release/bench/amp_speed
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "ember/ember.h"

namespace F = ember::nn::functional;
using ember::Tensor;

namespace {

// Median milliseconds of `reps` calls of fn, after one warm-up call.
template <class Fn>
double median_ms(Fn&& fn, int reps) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void linear_cases(int threads) {
  struct Shape {
    int64_t m, k, n;
  };
  for (const Shape s : {Shape{128, 784, 512}, Shape{512, 512, 512}, Shape{1024, 1024, 1024}}) {
    const Tensor x = ember::randn({s.m, s.k}), w = ember::randn({s.n, s.k}), b = ember::randn({s.n});
    const double f32 = median_ms([&] { (void)ember::linear(x, w, b); }, 21);
    const double bf16 = median_ms(
        [&] {
          ember::amp::autocast guard(ember::kBFloat16);
          (void)ember::linear(x, w, b);
        },
        21);
    std::printf("threads %d  linear %lldx%lldx%lld          f32 %8.3f ms  autocast bf16 %8.3f ms  (%.2fx)\n", threads,
                static_cast<long long>(s.m), static_cast<long long>(s.k), static_cast<long long>(s.n), f32, bf16,
                f32 / bf16);
  }
}

void conv_cases(int threads) {
  struct Shape {
    const char* name;
    int64_t n, c, o, h, k, pad;
    int reps;
  };
  const Shape shapes[] = {{"32x64->64 56x56 3x3 pad 1", 32, 64, 64, 56, 3, 1, 7},
                          {"64x1->32 28x28 3x3", 64, 1, 32, 28, 3, 0, 21},
                          {"64x32->64 13x13 3x3", 64, 32, 64, 13, 3, 0, 21}};
  for (const Shape& s : shapes) {
    double ms[2][2];  // [f32, bf16][forward, forward+backward]
    for (int d = 0; d < 2; ++d) {
      const ember::DType t = d == 0 ? ember::kFloat32 : ember::kBFloat16;
      const Tensor x = ember::randn({s.n, s.c, s.h, s.h}).to(t), w = ember::randn({s.o, s.c, s.k, s.k}).to(t),
                   b = ember::randn({s.o}).to(t);
      ms[d][0] = median_ms([&] { (void)F::conv2d(x, w, b, 1, s.pad); }, s.reps);
      const Tensor xr = x.clone().requires_grad_(), wr = w.clone().requires_grad_(), br = b.clone().requires_grad_();
      const Tensor gy = ember::randn(F::conv2d(x, w, b, 1, s.pad).sizes()).to(t);
      ms[d][1] = median_ms(
          [&] {
            const Tensor y = F::conv2d(xr, wr, br, 1, s.pad);
            (void)ember::autograd::grad({y}, {xr, wr, br}, {gy});
          },
          s.reps);
    }
    std::printf("threads %d  conv2d %-26s forward %.2fx (%.3f / %.3f ms)  forward+backward %.2fx (%.3f / %.3f ms)\n",
                threads, s.name, ms[0][0] / ms[1][0], ms[0][0], ms[1][0], ms[0][1] / ms[1][1], ms[0][1], ms[1][1]);
  }
}

}  // namespace

int main() {
  for (int threads : {1, 2}) {
    ember::set_num_threads(threads);
    linear_cases(threads);
    conv_cases(threads);
  }
}
