// One DistributedDataParallel training step of an MLP (784-256-128-10,
// float32, batch 64 per rank, SGD), and the share of all-reduce time hidden
// behind backward (DistributedDataParallel::overlap_fraction). Start it with
// a launcher, one thread per rank:
//   build/release/ember launch --nproc-per-node 2 -- build/release/bench/ddp_step            (gloo)
//   mpirun -np 2 --oversubscribe build/release/bench/ddp_step --backend mpi                  (mpi)
// Rank 0 prints the median step time (forward, backward with the gradient
// all-reduce, optimiser step) over the ranks' slowest, the same step without
// DDP, and the mean overlap. bench/ddp_step_torch.py is the PyTorch DDP side.
#include <ember/distributed.h>
#include <ember/ember.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

struct MlpImpl : ember::nn::Module {
  ember::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  MlpImpl() {
    fc1 = register_module("fc1", ember::nn::Linear(784, 256));
    fc2 = register_module("fc2", ember::nn::Linear(256, 128));
    fc3 = register_module("fc3", ember::nn::Linear(128, 10));
  }
  ember::Tensor forward(const ember::Tensor& x) { return fc3(fc2(fc1(x).relu()).relu()); }
};
EMBER_MODULE(Mlp);

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  ember::distributed::InitOptions options;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--backend") == 0) options.backend = argv[i + 1];
  auto pg = ember::distributed::init_process_group(options);
  ember::set_num_threads(1);
  ember::manual_seed(0);
  Mlp model;
  ember::nn::parallel::DistributedDataParallel ddp(model);
  ember::optim::SGD opt(model->parameters(), ember::optim::SGDOptions(0.01));
  const ember::Tensor x = ember::randn({64, 784});
  const ember::Tensor y = ember::randint(0, 10, {64});
  constexpr int kWarmup = 20, kSteps = 300;

  auto time_steps = [&](bool distributed, double* overlap) {
    std::vector<double> times;
    double overlap_sum = 0;
    for (int i = 0; i < kWarmup + kSteps; ++i) {
      pg->barrier()->wait();  // every rank starts the step together
      const auto t0 = std::chrono::steady_clock::now();
      opt.zero_grad();
      auto loss_of = [&] { return ember::nn::functional::cross_entropy(model(x), y); };
      if (distributed) {
        ddp.forward(loss_of).backward();
      } else {
        ember::nn::parallel::DistributedDataParallel::NoSync local(ddp);
        ddp.forward(loss_of).backward();
      }
      opt.step();
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (i < kWarmup) continue;
      // The step takes as long as its slowest rank.
      ember::Tensor slowest = ember::full({1}, t, ember::kFloat64);
      pg->all_reduce(slowest, ember::distributed::ReduceOp::MAX)->wait();
      times.push_back(slowest.item<double>());
      if (distributed) overlap_sum += ddp.overlap_fraction();
    }
    if (overlap) *overlap = overlap_sum / kSteps;
    return median(times);
  };

  double overlap = 0;
  const double local = time_steps(false, nullptr);
  const double step = time_steps(true, &overlap);
  if (pg->rank() == 0)
    std::printf("DDP step, MLP 784-256-128-10, batch 64 per rank, %s, %d ranks x 1 thread\n"
                "step %.1f us (median of %d, slowest rank), without the all-reduce %.1f us, overlap %.2f\n",
                pg->backend_name().c_str(), pg->size(), step * 1e6, kSteps, local * 1e6, overlap);
  return 0;
}
