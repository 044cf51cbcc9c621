// STREAM-style bandwidth of this machine, the roofline for memory-bound ops:
// triad a = b + s*c and copy a = b over 3 x 256 MiB arrays, 1 and 2 threads,
// median of 9 runs (the loops: bench/machine_limits.h). Arrays are touched
// before timing.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/machine_limits.h"

int main() {
  namespace mb = ember::bench;
  mb::StreamArrays arrays(size_t{256} << 20);
  for (int threads : {1, 2}) {
    std::vector<double> triad, copy;
    for (int rep = 0; rep < 9; ++rep) {
      triad.push_back(arrays.triad_gbs(threads));
      copy.push_back(arrays.copy_gbs(threads));
    }
    const auto [lo, hi] = std::minmax_element(triad.begin(), triad.end());
    std::printf("threads %d: triad %.1f GB/s (min %.1f, max %.1f), copy %.1f GB/s\n", threads, mb::median_of(triad),
                *lo, *hi, mb::median_of(copy));
  }
  return 0;
}
