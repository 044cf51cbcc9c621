// The side-by-side harness shared by the bench/compare_*.cpp programs: ember
// against libtorch in one process, A/B interleaved, as medians of repeated
// samples (see ../shared/BENCHMARKING.md for why).
//
// Run the programs through bench/run_all.sh, which sets up a fair libtorch:
// OpenBLAS instead of the reference BLAS, OPENBLAS_CORETYPE unset, explicit
// thread counts. Each prints a table: case, threads, ember median, torch
// median, ratio (torch/ember: above 1 means ember is faster).
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember_bench {

using Clock = std::chrono::steady_clock;

// Seconds per call of fn, timed over batches of at least `min_batch_s`. One
// untimed call first lets the other side's threads go idle and wakes this
// side's (for small ops the shorter batches below do the same; a 60 ms GEMM
// is timed in its first batch).
inline double seconds_per_call(const std::function<void()>& fn, double min_batch_s = 0.02) {
  fn();
  int64_t iters = 1;
  for (;;) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < iters; ++i) fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s >= min_batch_s) return s / static_cast<double>(iters);
    iters = s <= 0 ? iters * 10 : std::max<int64_t>(iters * 2, static_cast<int64_t>(iters * min_batch_s * 1.2 / s));
  }
}

struct Stat {
  double median, lo, hi;
};

inline Stat stat(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

struct Case {
  std::string name;
  std::function<void()> ember_fn, torch_fn;
  double work = 0;         // flops or bytes per call, for the rate column
  const char* unit = "";  // "GFLOP/s" or "GB/s"
};

inline void run(const Case& c, int threads, int samples = 7) {
  ember::set_num_threads(threads);
  at::set_num_threads(threads);
  c.ember_fn();  // warm up (caches, allocator, pages)
  c.torch_fn();
  // The order alternates: the side that runs second finds the cores warm and
  // the other side's threads still awake (libtorch's OpenMP workers spin for
  // milliseconds after each call, on these 2-core VMs waking an idle core
  // can take as long), so a fixed order would favour one side.
  std::vector<double> e, t;
  for (int i = 0; i < samples; ++i) {
    if (i % 2 == 0) {
      e.push_back(seconds_per_call(c.ember_fn));
      t.push_back(seconds_per_call(c.torch_fn));
    } else {
      t.push_back(seconds_per_call(c.torch_fn));
      e.push_back(seconds_per_call(c.ember_fn));
    }
  }
  const Stat se = stat(e), st = stat(t);
  auto fmt_time = [](double s) {
    char buf[32];
    if (s < 1e-6) std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
    else if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
    else std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
    return std::string(buf);
  };
  std::printf("| %-34s | %d | %10s (%s-%s) | %10s (%s-%s) | %5.2fx |", c.name.c_str(), threads,
              fmt_time(se.median).c_str(), fmt_time(se.lo).c_str(), fmt_time(se.hi).c_str(),
              fmt_time(st.median).c_str(), fmt_time(st.lo).c_str(), fmt_time(st.hi).c_str(), st.median / se.median);
  if (c.work > 0) std::printf(" %.1f vs %.1f %s |", c.work / se.median / 1e9, c.work / st.median / 1e9, c.unit);
  std::printf("\n");
  std::fflush(stdout);
}

template <class F>
void keep(F&& v) {
  asm volatile("" : : "g"(&v) : "memory");
}


// Runs every case whose name contains `only` (all when empty) on 1 and 2 threads.
inline void run_cases(const std::vector<Case>& cases, const std::string& only) {
  std::printf("| case | threads | ember median (min-max) | libtorch median (min-max) | torch/ember | rate |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    for (int threads : {1, 2}) run(c, threads);
  }
}

}  // namespace ember_bench
