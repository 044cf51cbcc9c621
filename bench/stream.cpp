// STREAM-style bandwidth of this machine, the roofline for memory-bound ops:
// triad a = b + s*c and copy a = b over 3 × 256 MiB arrays, 1 and 2 threads,
// median of 9 runs. Arrays are touched before timing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main() {
  const size_t n = (256u << 20) / sizeof(double);
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n, 3.0);
  for (int threads : {1, 2}) {
    std::vector<double> triad, copy;
    for (int rep = 0; rep < 9; ++rep) {
      for (int kind = 0; kind < 2; ++kind) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            const size_t lo = n * t / threads, hi = n * (t + 1) / threads;
            if (kind == 0)
              for (size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0 * c[i];
            else
              for (size_t i = lo; i < hi; ++i) a[i] = b[i];
          });
        }
        for (auto& th : pool) th.join();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        (kind == 0 ? triad : copy).push_back((kind == 0 ? 3.0 : 2.0) * n * sizeof(double) / s / 1e9);
      }
    }
    std::sort(triad.begin(), triad.end());
    std::sort(copy.begin(), copy.end());
    std::printf("threads %d: triad %.1f GB/s (min %.1f, max %.1f), copy %.1f GB/s\n", threads, triad[4], triad[0],
                triad[8], copy[4]);
  }
  return a[n / 2] > 0 ? 0 : 1;
}
