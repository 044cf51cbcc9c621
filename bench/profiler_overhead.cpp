// What profiling costs a training step: the demo MLP of
// config/fashion_mnist_mlp.yaml (784 -> 256 -> 128 -> 10, batch 64, Adam;
// zero_grad, forward, cross entropy, backward, step) timed without a profile,
// under a default Profile, and under the one `ember train --profile-steps`
// uses (shapes and memory). A/B interleaved: each round times `steps` steps
// in every mode, a profile started before and stopped after its steps (the
// stop, which merges the threads' events, is included). Times are the
// process's CPU time (all threads), which a busy machine disturbs less than
// wall time; the median per-round ratio is the figure to quote.
//
//   profiler_overhead [rounds=15] [steps=20] [threads=1]
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "ember/ember.h"
#include "ember/profiler.h"

namespace {

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct Step {
  ember::nn::Sequential model{ember::nn::Linear(784, 256), ember::nn::ReLU(), ember::nn::Linear(256, 128),
                              ember::nn::ReLU(), ember::nn::Linear(128, 10)};
  ember::optim::Adam opt{model->parameters(), ember::optim::AdamOptions(1e-3)};
  ember::Tensor x = ember::randn({64, 784});
  ember::Tensor y = ember::randint(0, 10, {64});

  void run() {
    opt.zero_grad();
    ember::Tensor loss = ember::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  }
};

// CPU milliseconds per step over `steps` steps, profiled with `options` if given.
double time_steps(Step& step, int steps, const std::optional<ember::profiler::ProfileOptions>& options) {
  const double start = cpu_ms();
  {
    std::optional<ember::profiler::Profile> p;
    if (options) p.emplace(*options);
    for (int i = 0; i < steps; ++i) step.run();
  }
  return (cpu_ms() - start) / steps;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  if (rounds < 1 || steps < 1 || threads < 1) {
    std::fprintf(stderr, "usage: profiler_overhead [rounds>=1] [steps>=1] [threads>=1]\n");
    return 2;
  }
  ember::set_num_threads(threads);
  ember::manual_seed(0);
  Step step;
  const std::vector<std::optional<ember::profiler::ProfileOptions>> modes = {
      std::nullopt, ember::profiler::ProfileOptions{},
      ember::profiler::ProfileOptions{.record_shapes = true, .profile_memory = true}};
  const char* names[] = {"no profile", "Profile()", "Profile(record_shapes, profile_memory)"};
  for (int i = 0; i < 3; ++i) time_steps(step, steps, modes[i % 3]);  // warm-up: caches, allocator
  std::vector<std::vector<double>> ms(modes.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t m = 0; m < modes.size(); ++m) ms[m].push_back(time_steps(step, steps, modes[m]));
  std::printf("MLP 784-256-128-10, batch 64, Adam; %d threads; %d rounds of %d steps per mode\n", threads, rounds,
              steps);
  const double base = median(ms[0]);
  for (size_t m = 0; m < modes.size(); ++m) {
    const auto [lo, hi] = std::minmax_element(ms[m].begin(), ms[m].end());
    std::printf("%-42s %8.3f CPU ms/step (%.3f-%.3f)  ratio %.3f\n", names[m], median(ms[m]), *lo, *hi,
                median(ms[m]) / base);
  }
  // Ratio per round (each against the round's own unprofiled time), median.
  for (size_t m = 1; m < modes.size(); ++m) {
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) ratios.push_back(ms[m][r] / ms[0][r]);
    const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    std::printf("%-42s median per-round ratio %.3f (%.3f-%.3f)\n", names[m], median(ratios), *lo, *hi);
  }
  return 0;
}
