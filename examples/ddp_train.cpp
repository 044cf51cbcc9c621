// Data-parallel training on several processes: each rank trains a replica
// on its share of every batch (DistributedSampler) and DistributedDataParallel
// averages the gradients while backward runs. The task is made up (is the sum
// of 8 numbers positive, negative or near zero?), so it needs no data files.
//   build/release/ember launch --nproc-per-node 2 -- build/release/examples/ddp_train
// Every rank ends with the same weights; rank 0 prints the losses, the
// bucket plan and how much of the all-reduce time backward hid.
#include <ember/distributed.h>
#include <ember/ember.h>

#include <iostream>

namespace nn = ember::nn;
using ember::Tensor;

struct ClassifierImpl : nn::Module {
  ClassifierImpl() : Module("Classifier") {
    hidden = register_module("hidden", nn::Linear(8, 64));
    out = register_module("out", nn::Linear(64, 3));
  }
  Tensor forward(const Tensor& x) { return out(hidden(x).relu()); }
  nn::Linear hidden{nullptr}, out{nullptr};
};
EMBER_MODULE(Classifier);

int main() {
  auto group = ember::distributed::init_process_group();  // gloo, env:// (set by ember launch)
  const int rank = group->rank();

  ember::manual_seed(0);  // the same data set on every rank; each reads its share
  Tensor x = ember::randn({4096, 8});
  Tensor s = x.sum({1});
  Tensor y = (s > -1.0).to(ember::kInt64) + (s > 1.0).to(ember::kInt64);
  auto dataset = std::make_shared<ember::data::TensorDataset>(x, y);
  auto sampler = std::make_shared<ember::data::DistributedSampler>(dataset->size());
  ember::data::DataLoaderOptions loader_options;
  loader_options.batch_size = 64;  // per rank
  loader_options.sampler = sampler;
  ember::data::DataLoader loader(dataset, loader_options);

  Classifier model;
  nn::parallel::DistributedDataParallel ddp(model);  // rank 0's initial weights everywhere
  ember::optim::SGD optimizer(model->parameters(), ember::optim::SGDOptions(0.1).momentum(0.9));
  if (rank == 0) std::cout << ddp.bucket_plan();

  for (int epoch = 0; epoch < 5; ++epoch) {
    double total = 0;
    int batches = 0;
    for (ember::data::Example& batch : loader) {
      optimizer.zero_grad();
      Tensor loss = ddp.forward([&] { return nn::functional::cross_entropy(model(batch.data), batch.target); });
      loss.backward();
      optimizer.step();
      total += loss.item<double>();
      ++batches;
    }
    if (rank == 0)
      std::cout << "epoch " << epoch << ": mean loss on rank 0's share " << total / batches << ", overlap "
                << ddp.overlap_fraction() << "\n";
  }
  // The replicas agree: the largest weight difference to rank 0 is zero.
  Tensor w = model->out->weight.detach().clone();
  group->broadcast(w, 0)->wait();
  const double gap = (w - model->out->weight).abs().max().item<double>();
  std::cout << "rank " << rank << ": largest difference to rank 0's weights " << gap << "\n";
  return gap == 0 ? 0 : 1;
}
