// Graph fusion: the chain ((x*2+1).relu()*y).exp() on x, y of 16M floats,
// traced and fused (one _fused_elementwise node) against ember eager (five
// ops, four intermediates) and a STREAM triad a = b + s*c over the same bytes
// (two arrays read, one written), on 1 and 2 threads. Medians of 21 runs after
// a warm-up, and the ratios, in one run (docs/performance.md, "Graph fusion");
// on 1 thread also the process's CPU time, steadier on a shared machine.
//   build/release/bench/fusion
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

#include "ember/ember.h"
#include "ember/jit.h"
#include "ember/parallel.h"

using ember::Tensor;

namespace {

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

struct Times {
  double wall, cpu;  // medians, ms
};

// Medians of `reps` calls after a warm-up: wall time, and the CPU time of the
// process, which on a shared machine is what a 1-thread run would take alone.
template <class Fn>
Times median_ms(Fn&& fn, int reps) {
  fn();
  std::vector<double> wall, cpu;
  for (int i = 0; i < reps; ++i) {
    const double c0 = cpu_ms();
    const auto start = std::chrono::steady_clock::now();
    fn();
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    cpu.push_back(cpu_ms() - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

std::vector<Tensor> chain(const std::vector<Tensor>& in) { return {(((in[0] * 2 + 1).relu()) * in[1]).exp()}; }

}  // namespace

int main() {
  constexpr int64_t n = int64_t{16} << 20;
  ember::manual_seed(0);
  const Tensor x = ember::randn({n}), y = ember::randn({n}) * 0.1;
  ember::jit::GraphModule fused = ember::jit::trace(chain, {x, y});
  ember::jit::optimize(fused);
  std::printf("graph after the default passes:\n%s\n", fused.graph_text().c_str());
  {
    const Tensor a = fused.forward({x, y})[0], b = chain({x, y})[0];
    std::printf("fused vs eager: max abs difference %g\n\n", (a - b).abs().max().item<double>());
  }
  Tensor out = ember::empty({n});
  const float* b = x.data_ptr<float>();
  const float* c = y.data_ptr<float>();
  float* a = out.data_ptr<float>();
  for (int threads : {1, 2}) {
    ember::set_num_threads(threads);
    const Times triad = median_ms(
        [&] {
          ember::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) a[i] = b[i] + 3.0f * c[i];
          });
        },
        21);
    const Times eager = median_ms([&] { (void)chain({x, y}); }, 21);
    const Times graph = median_ms([&] { (void)fused.forward({x, y}); }, 21);
    std::printf("threads %d  wall: triad %7.2f ms  fused %7.2f ms  eager %7.2f ms   fused/triad %.2f  eager/fused %.2f\n",
                threads, triad.wall, graph.wall, eager.wall, graph.wall / triad.wall, eager.wall / graph.wall);
    if (threads == 1)
      std::printf("threads 1  cpu:  triad %7.2f ms  fused %7.2f ms  eager %7.2f ms   fused/triad %.2f  eager/fused %.2f\n",
                  triad.cpu, graph.cpu, eager.cpu, graph.cpu / triad.cpu, eager.cpu / graph.cpu);
  }
  return 0;
}
