// Saving and loading a training checkpoint of N MiB (default 1024) of float32
// parameters in 64 MiB tensors, against writing and reading the same bytes
// with plain stdio in the same run (the disk and page cache's own speed).
// Median of 3 each; prints seconds, GB/s and the ratio to plain I/O.
//   build/release/bench/checkpoint_io [MiB] [directory, default the system temp dir]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/training_checkpoint.h"

namespace {

double median_seconds(const std::function<void()>& f) {
  std::vector<double> s;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return s[1];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t mib = argc > 1 ? std::atoll(argv[1]) : 1024;
  const std::filesystem::path dir = argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path();
  const std::string ckpt_path = (dir / "ember_bench_checkpoint.ckpt").string();
  const std::string raw_path = (dir / "ember_bench_raw.bin").string();

  ember::TrainingCheckpoint ckpt;
  const int64_t per_tensor = int64_t{16} << 20;  // 64 MiB of float32
  for (int64_t done = 0, i = 0; done < mib; done += 64, ++i)
    ckpt.states["model"].emplace("w" + std::to_string(i), ember::rand({per_tensor}));
  const double bytes = static_cast<double>(mib) * (1 << 20);

  const double save_s = median_seconds([&] { ember::save_training_checkpoint(ckpt, ckpt_path); });
  const double load_s = median_seconds([&] { (void)ember::load_training_checkpoint(ckpt_path); });
  const double write_s = median_seconds([&] {
    std::FILE* f = std::fopen(raw_path.c_str(), "wb");
    for (const auto& [name, t] : ckpt.states["model"]) std::fwrite(t.data_ptr(), 1, t.nbytes(), f);
    std::fflush(f);
    std::fclose(f);
  });
  std::vector<char> buffer(static_cast<size_t>(per_tensor) * 4);
  const double read_s = median_seconds([&] {
    std::FILE* f = std::fopen(raw_path.c_str(), "rb");
    while (std::fread(buffer.data(), 1, buffer.size(), f) == buffer.size()) {
    }
    std::fclose(f);
  });
  std::filesystem::remove(ckpt_path);
  std::filesystem::remove(raw_path);

  std::printf("checkpoint of %lld MiB, median of 3\n", static_cast<long long>(mib));
  std::printf("%-22s %10s %10s %14s\n", "", "seconds", "GB/s", "vs plain I/O");
  std::printf("%-22s %10.3f %10.2f %13.2fx\n", "save_training_checkpoint", save_s, bytes / save_s / 1e9, save_s / write_s);
  std::printf("%-22s %10.3f %10.2f %13.2fx\n", "load_training_checkpoint", load_s, bytes / load_s / 1e9, load_s / read_s);
  std::printf("%-22s %10.3f %10.2f\n", "plain fwrite", write_s, bytes / write_s / 1e9);
  std::printf("%-22s %10.3f %10.2f\n", "plain fread", read_s, bytes / read_s / 1e9);
  return 0;
}
