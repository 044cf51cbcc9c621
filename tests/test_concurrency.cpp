// Concurrency: the parts of ember that threads share, exercised from several
// threads at once. Each test asserts its results; `make tsan` runs them (and
// the thread pool, data loader and allocator suites) under ThreadSanitizer,
// which turns any data race into a failure (docs/testing.md).
//
// Ops are registered once, while the library loads (wiring/wire.cpp runs in
// static initialisation, before any thread can call one), so calls never
// race with registration; what threads do share at call time is the
// dispatcher's tables (read-only), the thread pool, the allocators, the
// default generator and the autograd engine, and each thread's own dispatch
// keys (grad mode, autocast, the profiler and tracer modes) must stay its own.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "ember/allocator.h"
#include "ember/amp.h"
#include "ember/autograd.h"
#include "ember/data.h"
#include "ember/ember.h"
#include "ember/generator.h"
#include "ember/parallel.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

// Runs body(thread index) on `n` threads at once and joins them.
template <class F>
void on_threads(int n, F body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back([&body, t] { body(t); });
  for (std::thread& th : threads) th.join();
}

TEST(Concurrency, ParallelForFromSeveralThreadsAtOnce) {
  ThreadCount restore;
  set_num_threads(2);
  std::vector<int> wrong(4);
  on_threads(4, [&](int t) {
    for (int round = 0; round < 200; ++round) {
      std::atomic<int64_t> sum{0};
      parallel_for(0, 10'000, 100, [&](int64_t b, int64_t e) {
        int64_t local = 0;
        for (int64_t i = b; i < e; ++i) local += i;
        sum += local;
      });
      if (sum.load() != 49'995'000) ++wrong[static_cast<size_t>(t)];
    }
  });
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

TEST(Concurrency, OpsFromSeveralThreadsGiveTheOneThreadResult) {
  ThreadCount restore;
  set_num_threads(2);
  const Tensor a = arange(4096, kFloat32).reshape({64, 64}).div(Scalar(4096.0));
  const Tensor want = a.matmul(a).softmax(-1).sum();
  std::vector<double> got(4);
  on_threads(4, [&](int t) {
    for (int round = 0; round < 20; ++round) got[static_cast<size_t>(t)] = a.matmul(a).softmax(-1).sum().item<double>();
  });
  for (double g : got) EXPECT_EQ(g, want.item<double>());
}

// Two threads, a million allocations and frees each, through the caching
// CPU allocator; the statistics must balance at the end.
TEST(Concurrency, CpuAllocatorTwoThreadsMillionBlocksEach) {
  Allocator* allocator = get_allocator(Device::cpu());
  const int64_t before = memory_stats().allocated_bytes;
  on_threads(2, [&](int t) {
    std::vector<DataPtr> held(8);
    for (int i = 0; i < 1'000'000; ++i) {
      DataPtr& slot = held[static_cast<size_t>(i % 8)];
      slot = allocator->allocate(static_cast<size_t>(64 + 64 * ((i + t) % 5)));
      static_cast<unsigned char*>(slot.get())[0] = static_cast<unsigned char>(i);
    }
  });
  EXPECT_EQ(memory_stats().allocated_bytes, before);
}

// Loaders with workers torn down while batches are still being made.
TEST(Concurrency, DataLoaderShutsDownWithBatchesInFlight) {
  const Tensor data = arange(4000, kFloat32).reshape({1000, 4});
  auto dataset = std::make_shared<data::TensorDataset>(data, arange(1000, kInt64));
  for (int round = 0; round < 20; ++round) {
    data::DataLoader loader(dataset, {.batch_size = 3, .shuffle = true, .num_workers = 2, .prefetch_factor = 4,
                                      .persistent_workers = round % 2 == 1});
    int64_t seen = 0;
    for (data::Example& batch : loader) {
      seen += batch.data.size(0);
      if (seen >= 3 * (1 + round % 4)) break;
    }
    EXPECT_EQ(seen, 3 * (1 + round % 4));
  }
}

// Grad mode and autocast are per thread: one thread's guard does not reach
// another's ops, while both run the same ops at the same time.
TEST(Concurrency, GradModeAndAutocastStayOnTheirThread) {
  const Tensor w = ones({8, 8}).requires_grad_();
  std::vector<int> wrong(3);
  on_threads(3, [&](int t) {
    for (int round = 0; round < 200; ++round) {
      if (t == 0) {
        NoGradGuard no_grad;
        if (w.matmul(w).requires_grad()) ++wrong[0];
      } else if (t == 1) {
        amp::autocast bf16(kBFloat16);
        if (w.detach().matmul(w.detach()).dtype() != kBFloat16) ++wrong[1];
      } else {
        const Tensor y = w.matmul(w);
        if (!y.requires_grad() || y.dtype() != kFloat32) ++wrong[2];
      }
    }
  });
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0}));
}

// Backward passes on separate graphs that share a leaf: its gradient
// accumulates every pass exactly once.
TEST(Concurrency, BackwardFromSeveralThreadsAccumulatesIntoASharedLeaf) {
  const Tensor w = full({16}, Scalar(2.0), kFloat64).requires_grad_();
  on_threads(4, [&](int) {
    for (int round = 0; round < 50; ++round) w.mul(w).sum().backward();
  });
  const std::vector<double> g = values(w.grad());
  for (double x : g) EXPECT_EQ(x, 4.0 * 200);
}

// The default generator hands out disjoint blocks under its lock: four
// threads drawing at once consume exactly what they drew.
TEST(Concurrency, DefaultGeneratorDrawsFromSeveralThreads) {
  manual_seed(3);
  const uint64_t start = default_generator().offset();
  std::atomic<int64_t> finite{0};
  on_threads(4, [&](int) {
    for (int round = 0; round < 100; ++round) {
      const Tensor r = randn({64});
      finite += r.isnan().any().item<bool>() || r.isinf().any().item<bool>() ? 0 : 1;
    }
  });
  EXPECT_EQ(finite.load(), 400);
  EXPECT_GT(default_generator().offset(), start);
}

}  // namespace
}  // namespace ember::testing
