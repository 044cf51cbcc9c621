// The Trainer under a process group (Note [Trainer under DDP]): the DDP it
// trains with, the checks that the ranks run alike, and the sums and stop
// decisions they share.
#include <string>
#include <vector>

#include "ember/data/distributed_sampler.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "ember/trainer.h"

namespace ember {

namespace {

void all_reduce_values(distributed::ProcessGroup& group, std::vector<double>& values, distributed::ReduceOp op) {
  Tensor t = from_blob(values.data(), {static_cast<int64_t>(values.size())}, kFloat64);
  group.all_reduce(t, op)->wait();
}

}  // namespace

std::shared_ptr<distributed::ProcessGroup> Trainer::group() const {
  if (group_) return group_;
  return distributed::is_initialized() ? distributed::get_default_group() : nullptr;
}

int Trainer::rank() const {
  const auto g = group();
  return g ? g->rank() : 0;
}

int Trainer::world_size() const {
  const auto g = group();
  return g ? g->size() : 1;
}

void Trainer::sum_across_ranks(std::vector<double>& values) const {
  all_reduce_values(*group(), values, distributed::ReduceOp::SUM);
}

bool Trainer::agree_to_stop() {
  if (!group_) return stop_agreed_ = stop_requested_;
  std::vector<double> flag = {stop_requested_ ? 1.0 : 0.0};
  all_reduce_values(*group_, flag, distributed::ReduceOp::MAX);
  return stop_agreed_ = flag[0] > 0;
}

void Trainer::start_distributed(const TrainableModel& model) {
  const int world = group_->size();
  const std::string& loader = train_loader_->options().name;
  EMBER_CHECK(world == 1 || dynamic_cast<data::DistributedSampler*>(train_loader_->options().sampler.get()),
              "Trainer::fit: on ", world, " ranks the training loader '", loader,
              "' needs a data::DistributedSampler (DataLoaderOptions::sampler); without one every rank would "
              "train on the same batches");
  // The ranks must run the same number of batches and start from the same
  // point, or their collectives would not match: each value goes in twice,
  // negated the second time, so that one MAX gives the range.
  const auto batches = static_cast<double>(train_loader_->size());
  const auto epoch = static_cast<double>(epochs_completed_), step = static_cast<double>(step_);
  std::vector<double> range = {batches, -batches, epoch, -epoch, step, -step};
  all_reduce_values(*group_, range, distributed::ReduceOp::MAX);
  EMBER_CHECK(range[0] == -range[1], "Trainer::fit: the ranks' training loaders '", loader, "' have from ", -range[1],
              " to ", range[0], " batches per epoch (this rank: ", batches,
              "); every rank needs the same number (the same data set size, batch size and sampler)");
  EMBER_CHECK(range[2] == -range[3] && range[4] == -range[5], "Trainer::fit: the ranks start from different points: ",
              "epochs completed from ", -range[3], " to ", range[2], ", steps from ", -range[5], " to ", range[4],
              " (this rank: epoch ", epoch, ", step ", step, "); every rank must resume from the same checkpoint");
  if (options_.ddp) {
    EMBER_CHECK(options_.ddp->module() == model.module,
                "Trainer::fit: options.ddp wraps another module than the model being trained");
    ddp_ = options_.ddp;
  } else {
    ddp_ = std::make_shared<nn::parallel::DistributedDataParallel>(model.module, options_.ddp_options, group_);
  }
}

}  // namespace ember
