// ember against libtorch in one process, A/B interleaved, as medians of
// repeated samples (see ../shared/BENCHMARKING.md for why).
//
// Run through bench/run_all.sh, which sets up a fair libtorch: OpenBLAS
// instead of the reference BLAS, OPENBLAS_CORETYPE unset, explicit thread
// counts. Prints a table: case, threads, ember median, torch median, ratio.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace {

using Clock = std::chrono::steady_clock;

// Seconds per call of fn, timed over batches of at least `min_batch_s`.
double seconds_per_call(const std::function<void()>& fn, double min_batch_s = 0.02) {
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

Stat stat(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

struct Case {
  std::string name;
  std::function<void()> ember_fn, torch_fn;
  double work = 0;         // flops or bytes per call, for the rate column
  const char* unit = "";  // "GFLOP/s" or "GB/s"
};

void run(const Case& c, int threads, int samples = 7) {
  ember::set_num_threads(threads);
  at::set_num_threads(threads);
  c.ember_fn();  // warm up (caches, allocator, pages)
  c.torch_fn();
  std::vector<double> e, t;
  for (int i = 0; i < samples; ++i) {
    e.push_back(seconds_per_call(c.ember_fn));
    t.push_back(seconds_per_call(c.torch_fn));
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

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::printf("| case | threads | ember median (min-max) | libtorch median (min-max) | torch/ember | rate |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::vector<Case> cases;

  // Per-op eager overhead on 1-element tensors.
  {
    auto ea = ember::ones({1}), eb = ember::ones({1});
    auto ta = torch::ones({1}), tb = torch::ones({1});
    cases.push_back({"a + b, 1 element (overhead)", [=] { keep(ea + eb); }, [=] { keep(ta + tb); }});
    cases.push_back({"a.relu(), 1 element (overhead)", [=] { keep(ea.relu()); }, [=] { keep(ta.relu()); }});
    cases.push_back({"a.sum(), 1 element (overhead)", [=] { keep(ea.sum()); }, [=] { keep(ta.sum()); }});
  }
  // Autograd overhead: recording a node per op, and a backward pass over a
  // chain of 1,000 tiny nodes (the leaf's .grad is reset each time on both sides).
  {
    auto ea = ember::ones({1}).requires_grad_(), eb = ember::ones({1}).requires_grad_();
    auto ta = torch::ones({1}, torch::requires_grad()), tb = torch::ones({1}, torch::requires_grad());
    cases.push_back({"a + b, 1 element, requires grad", [=] { keep(ea + eb); }, [=] { keep(ta + tb); }});
    auto ember_chain = [ex = ember::ones({1}).requires_grad_()] {
      ember::Tensor h = ex;
      for (int i = 0; i < 1000; ++i) h = i % 2 == 0 ? h * 1.0001 : h + 0.5;
      h.backward();
      ex.set_grad(ember::Tensor());
    };
    auto torch_chain = [tx = torch::ones({1}, torch::requires_grad())] {
      torch::Tensor h = tx;
      for (int i = 0; i < 1000; ++i) h = i % 2 == 0 ? h * 1.0001 : h + 0.5;
      h.backward();
      tx.mutable_grad().reset();
    };
    cases.push_back({"1,000-op chain, forward+backward", ember_chain, torch_chain});
  }
  // Matmul.
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
                                                            {2048, 2048, 2048}, {128, 784, 512}}) {
    auto ea = ember::randn({m, k}), eb = ember::randn({k, n});
    auto ta = torch::randn({m, k}), tb = torch::randn({k, n});
    char name[64];
    std::snprintf(name, sizeof name, "mm f32 %ldx%ldx%ld", m, k, n);
    cases.push_back({name, [=] { keep(ea.mm(eb)); }, [=] { keep(ta.mm(tb)); }, 2.0 * m * k * n, "GFLOP/s"});
  }
  // Memory-bound elementwise and reductions on 16M floats (allocating results).
  {
    const int64_t n = 16 << 20;
    auto ea = ember::randn({n}), eb = ember::randn({n});
    auto ta = torch::randn({n}), tb = torch::randn({n});
    const double rw2 = 3.0 * 4 * n, rw1 = 2.0 * 4 * n, r1 = 4.0 * n;
    cases.push_back({"add 16M", [=] { keep(ea + eb); }, [=] { keep(ta + tb); }, rw2, "GB/s"});
    cases.push_back({"relu 16M", [=] { keep(ea.relu()); }, [=] { keep(ta.relu()); }, rw1, "GB/s"});
    cases.push_back({"gelu 16M", [=] { keep(ea.gelu()); }, [=] { keep(torch::gelu(ta)); }, rw1, "GB/s"});
    cases.push_back({"exp 16M", [=] { keep(ea.exp()); }, [=] { keep(ta.exp()); }, rw1, "GB/s"});
    cases.push_back({"sum 16M", [=] { keep(ea.sum()); }, [=] { keep(ta.sum()); }, r1, "GB/s"});
    cases.push_back({"logsumexp 16M", [=] { keep(ea.logsumexp({0})); }, [=] { keep(ta.logsumexp(0)); }, r1, "GB/s"});
  }
  for (const Case& c : cases) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    for (int threads : {1, 2}) run(c, threads);
  }
  return 0;
}
