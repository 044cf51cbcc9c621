// The data pipeline on Fashion-MNIST's training split (60000 images 28x28,
// Debian's dataset-fashion-mnist; each benchmark skips when it is missing):
//   BM_DecodeIdxGz     inflate and parse the gzipped IDX images
//   BM_OpenCache       map the decoded images and labels from a dataset cache
//                      (what runs after the first one do instead of decoding;
//                      the cache stays in $TMPDIR, /tmp by default)
//   BM_LoaderEpoch/N   one epoch of batches of 64 with ToTensor + Normalize per
//                      sample and N worker threads (0: the calling thread);
//                      the batches are not used, so samples/s is the most a
//                      training loop could consume
//
//   cmake --build build/<dir> --target bench_data
//   build/<dir>/bench/bench_data --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "ember/ember.h"

namespace {

using namespace ember::data;

bool have_fashion_mnist(benchmark::State& state) {
  struct stat st;
  if (::stat(mnist_files(kFashionMnistDir, true).images.c_str(), &st) == 0) return true;
  state.SkipWithError("dataset-fashion-mnist is not installed");
  return false;
}

std::string cache_path() {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/ember_bench_fashion_mnist.cache";
}

void BM_DecodeIdxGz(benchmark::State& state) {
  if (!have_fashion_mnist(state)) return;
  const std::string images = mnist_files(kFashionMnistDir, true).images;
  for (auto _ : state) {
    ember::Tensor t = load_idx(images);
    benchmark::DoNotOptimize(t.data_ptr());
  }
}
BENCHMARK(BM_DecodeIdxGz)->Unit(benchmark::kMillisecond);

void BM_OpenCache(benchmark::State& state) {
  if (!have_fashion_mnist(state)) return;
  IdxDataset warm(mnist_files(kFashionMnistDir, true), cache_path());  // builds the cache once
  for (auto _ : state) {
    IdxDataset ds(mnist_files(kFashionMnistDir, true), cache_path());
    benchmark::DoNotOptimize(ds.data().data_ptr());
  }
}
BENCHMARK(BM_OpenCache)->Unit(benchmark::kMillisecond);

void BM_LoaderEpoch(benchmark::State& state) {
  if (!have_fashion_mnist(state)) return;
  auto images = std::make_shared<IdxDataset>(mnist_files(kFashionMnistDir, true), cache_path());
  auto train = std::make_shared<MapDataset>(images, Compose({ToTensor(), Normalize({0.2860}, {0.3530})}));
  DataLoader loader(train, {.batch_size = 64, .shuffle = true, .num_workers = static_cast<size_t>(state.range(0)),
                            .persistent_workers = state.range(0) > 0, .seed = 0});
  for (auto _ : state) {
    for (Example& batch : loader) benchmark::DoNotOptimize(batch.data.data_ptr());
  }
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(images->size()) *
                                                       static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LoaderEpoch)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
