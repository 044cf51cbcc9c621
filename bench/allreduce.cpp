// all_reduce bandwidth between processes, 1 KiB to 64 MiB of float32, per
// backend. Start it with a launcher:
//   build/release/ember launch --nproc-per-node 2 -- build/release/bench/allreduce            (gloo)
//   mpirun -np 2 --oversubscribe build/release/bench/allreduce --backend mpi                  (mpi)
// Rank 0 prints, per size, the median time of one all_reduce (sum) and two
// rates: algbw = bytes / time, and busbw = algbw * 2 (n - 1) / n, the bytes
// each rank's link carries in a ring (NCCL's convention).
#include <ember/distributed.h>
#include <ember/ember.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median time of one all_reduce of `bytes`, over enough repetitions for ~0.3 s.
double time_all_reduce(ember::distributed::ProcessGroup& pg, size_t bytes) {
  ember::Tensor t = ember::ones({static_cast<int64_t>(bytes / 4)});
  for (int i = 0; i < 3; ++i) pg.all_reduce(t)->wait();  // warm-up: connections, pages
  // Every rank runs the same count: rank 0's choice, broadcast.
  ember::Tensor reps = ember::zeros({1}, ember::kInt64);
  if (pg.rank() == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    pg.all_reduce(t)->wait();
    reps.fill_(std::clamp<int64_t>(static_cast<int64_t>(0.3 / std::max(seconds_since(t0), 1e-6)), 5, 2000));
  } else {
    pg.all_reduce(t)->wait();
  }
  pg.broadcast(reps, 0)->wait();
  std::vector<double> times;
  for (int64_t i = 0; i < reps.item<int64_t>(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    pg.all_reduce(t)->wait();
    times.push_back(seconds_since(t0));
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  ember::distributed::InitOptions options;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--backend") == 0) options.backend = argv[i + 1];
  auto pg = ember::distributed::init_process_group(options);
  const int n = pg->size();
  if (pg->rank() == 0)
    std::printf("all_reduce (sum, float32), %s, %d processes\n%10s %12s %12s %12s\n", pg->backend_name().c_str(), n,
                "bytes", "time (us)", "algbw GB/s", "busbw GB/s");
  std::vector<size_t> sizes;
  for (size_t b = 1024; b <= (size_t{64} << 20); b *= 4) {
    sizes.push_back(b);
    if (b == (size_t{16} << 20)) sizes.push_back(size_t{25} << 20);  // DDP's default bucket
  }
  for (size_t bytes : sizes) {
    const double t = time_all_reduce(*pg, bytes);
    const double algbw = static_cast<double>(bytes) / t / 1e9;
    if (pg->rank() == 0)
      std::printf("%10zu %12.1f %12.3f %12.3f\n", bytes, t * 1e6, algbw, algbw * 2.0 * (n - 1) / n);
  }
  return 0;
}
