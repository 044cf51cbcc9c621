// DistributedDataParallel scenarios of the distributed worker: gradients
// under DDP against the single-process gradients of the whole batch.
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ember/distributed/process_group.h"
#include "ember/ember.h"
#include "ember/nn/parallel/distributed.h"

using namespace ember;
using namespace ember::distributed;
using ember::nn::parallel::DistributedDataParallel;
using ember::nn::parallel::DistributedDataParallelOptions;

namespace {

struct NetImpl : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr}, spare{nullptr};
  explicit NetImpl(bool with_spare) {
    fc1 = register_module("fc1", nn::Linear(6, 16));
    fc2 = register_module("fc2", nn::Linear(16, 8));
    fc3 = register_module("fc3", nn::Linear(8, 3));
    if (with_spare) spare = register_module("spare", nn::Linear(3, 3));
    to(kFloat64);
  }
  Tensor forward(const Tensor& x) { return fc3(fc2(fc1(x).tanh()).tanh()); }
};
EMBER_MODULE(Net);

constexpr int64_t kLocalBatch = 4;

// The batch of microbatch `step` across all ranks (every rank draws the same).
std::pair<Tensor, Tensor> global_batch(int step, int world) {
  manual_seed(1000 + static_cast<uint64_t>(step));
  return {randn({kLocalBatch * world, 6}, kFloat64), randn({kLocalBatch * world, 3}, kFloat64)};
}

Tensor loss_of(Net& net, const Tensor& x, const Tensor& y) { return nn::functional::mse_loss(net(x), y); }

// Largest difference between the two models' gradients.
double grad_gap(Net& a, Net& b) {
  double gap = 0;
  const auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!pa[i].grad().defined() && !pb[i].grad().defined()) continue;
    if (!pa[i].grad().defined() || !pb[i].grad().defined()) return INFINITY;
    gap = std::max(gap, (pa[i].grad() - pb[i].grad()).abs().max().item<double>());
  }
  return gap;
}

std::shared_ptr<ProcessGroup> init_default() {
  InitOptions o;
  o.timeout = std::chrono::milliseconds(std::atoi(std::getenv("EMBER_TEST_TIMEOUT_MS")));
  if (const char* b = std::getenv("EMBER_TEST_BACKEND")) o.backend = b;
  return init_process_group(o);
}

}  // namespace

// Three iterations (the second and third after the bucket rebuild), the last
// one accumulating two microbatches under no_sync; tiny buckets, so that
// there are several.
int ddp_gradients() {
  auto pg = init_default();
  const int rank = pg->rank(), world = pg->size();
  manual_seed(static_cast<uint64_t>(rank));  // different weights: DDP must broadcast rank 0's
  Net net(false);
  DistributedDataParallelOptions options;
  options.bucket_cap_mb = 0.0005;
  options.first_bucket_cap_mb = 0.0002;
  options.gradient_as_bucket_view = std::getenv("EMBER_TEST_BUCKET_VIEW") != nullptr;
  DistributedDataParallel ddp(net, options);
  Net reference(false);
  reference->load_state_dict(net->state_dict());
  int failures = 0;
  for (int iteration = 0; iteration < 3; ++iteration) {
    net->zero_grad();
    reference->zero_grad();
    const int micro = iteration == 2 ? 2 : 1;
    for (int m = 0; m < micro; ++m) {
      const auto [x, y] = global_batch(iteration * 10 + m, world);
      const Tensor lx = x.narrow(0, rank * kLocalBatch, kLocalBatch), ly = y.narrow(0, rank * kLocalBatch, kLocalBatch);
      if (m + 1 < micro) {
        auto guard = ddp.no_sync();
        ddp.forward([&] { return loss_of(net, lx, ly); }).backward();
      } else {
        ddp.forward([&] { return loss_of(net, lx, ly); }).backward();
      }
      loss_of(reference, x, y).backward();
    }
    const double gap = grad_gap(net, reference);
    std::fprintf(stderr, "rank %d iteration %d: gradient gap %.3g, overlap %.2f\n", rank, iteration, gap,
                 ddp.overlap_fraction());
    if (!(gap <= 1e-12)) ++failures;
  }
  if (rank == 0) std::fprintf(stderr, "%s", ddp.bucket_plan().c_str());
  return failures == 0 ? 0 : 1;
}

// Rank 1 is killed (SIGKILL) during its second backward, after its first
// bucket started: the others' backward raises, naming rank 1.
int ddp_killed_in_backward() {
  auto pg = init_default();
  const int rank = pg->rank(), world = pg->size();
  Net net(false);
  DistributedDataParallelOptions options;
  options.first_bucket_cap_mb = 0.0001;
  DistributedDataParallel ddp(net, options);
  if (rank == 1) net->fc1->weight.register_hook([iteration = 0](const Tensor& g) mutable {
    if (++iteration == 2) ::raise(SIGKILL);
    return g;
  });
  try {
    for (int iteration = 0; iteration < 2; ++iteration) {
      const auto [x, y] = global_batch(iteration, world);
      const Tensor lx = x.narrow(0, rank * kLocalBatch, kLocalBatch), ly = y.narrow(0, rank * kLocalBatch, kLocalBatch);
      ddp.forward([&] { return loss_of(net, lx, ly); }).backward();
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "ERROR: %s\n", e.what());
    // Rank 1 is named; on a loaded machine a slow peer may be named with it.
    return std::string(e.what()).find("rank(s) 1") != std::string::npos ? 0 : 3;
  }
  return 4;
}

// A parameter the forward never uses: an error naming it without
// find_unused_parameters; correct gradients with it.
int ddp_unused() {
  auto pg = init_default();
  const int rank = pg->rank(), world = pg->size();
  const bool find_unused = std::getenv("EMBER_TEST_FIND_UNUSED") != nullptr;
  Net net(true);
  DistributedDataParallelOptions options;
  options.find_unused_parameters = find_unused;
  DistributedDataParallel ddp(net, options);
  Net reference(true);
  reference->load_state_dict(net->state_dict());
  try {
    for (int iteration = 0; iteration < 2; ++iteration) {
      net->zero_grad();
      reference->zero_grad();
      const auto [x, y] = global_batch(iteration, world);
      const Tensor lx = x.narrow(0, rank * kLocalBatch, kLocalBatch), ly = y.narrow(0, rank * kLocalBatch, kLocalBatch);
      ddp.forward([&] { return loss_of(net, lx, ly); }).backward();
      loss_of(reference, x, y).backward();
      if (!find_unused) continue;  // the next forward raises
      // The unused parameter's averaged gradient is zero; the reference has none.
      for (Tensor p : reference->spare->parameters()) p.set_grad(zeros_like(p));
      const double gap = grad_gap(net, reference);
      std::fprintf(stderr, "rank %d iteration %d: gradient gap %.3g\n", rank, iteration, gap);
      if (!(gap <= 1e-12)) return 1;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "ERROR: %s\n", e.what());
    return !find_unused && std::string(e.what()).find("2 parameter(s): spare.weight, spare.bias") != std::string::npos
               ? 0
               : 3;
  }
  return find_unused ? 0 : 4;
}
