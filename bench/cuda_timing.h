// Timing for the CUDA benchmarks: CUDA events on the current stream, so only
// device time is counted; the median of 15 runs after 3 warm-up runs.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "ember/cuda.h"

namespace ember_bench {

inline double median_device_ms(const std::function<void()>& f) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> ms;
  for (int i = 0; i < 15; ++i) {
    ember::cuda::Event start(true), end(true);
    start.record();
    f();
    end.record();
    end.synchronize();
    ms.push_back(start.elapsed_time(end));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace ember_bench
