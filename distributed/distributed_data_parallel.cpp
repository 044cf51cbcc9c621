#include "distributed/ddp_reducer.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/nn/parallel/distributed.h"

namespace ember::nn::parallel {

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module, DistributedDataParallelOptions options,
                                                 std::shared_ptr<distributed::ProcessGroup> group)
    : module_(std::move(module)), group_(group ? std::move(group) : distributed::get_default_group()),
      options_(options) {
  EMBER_CHECK(module_ != nullptr, "DistributedDataParallel: the module is null");
  EMBER_CHECK(options_.bucket_cap_mb > 0 && options_.first_bucket_cap_mb > 0,
              "DistributedDataParallel: bucket caps must be positive, got bucket_cap_mb=", options_.bucket_cap_mb,
              " first_bucket_cap_mb=", options_.first_bucket_cap_mb);
  {
    NoGradGuard no_grad;
    std::vector<std::shared_ptr<distributed::Work>> works;
    for (Tensor t : module_->parameters()) works.push_back(group_->broadcast(t, 0));
    for (Tensor t : module_->buffers()) works.push_back(group_->broadcast(t, 0));
    for (auto& w : works) w->wait();
  }
  reducer_ = std::make_unique<Reducer>(module_->named_parameters(), group_, options_);
}

DistributedDataParallel::~DistributedDataParallel() = default;

Tensor DistributedDataParallel::forward(const std::function<Tensor()>& forward) {
  prepare_forward();
  Tensor out = forward();
  finish_forward({out});
  return out;
}

void DistributedDataParallel::prepare_forward() {
  reducer_->check_previous_iteration();
  if (!options_.broadcast_buffers || group_->size() == 1) return;
  NoGradGuard no_grad;
  std::vector<std::shared_ptr<distributed::Work>> works;
  for (Tensor t : module_->buffers()) works.push_back(group_->broadcast(t, 0));
  for (auto& w : works) w->wait();
}

void DistributedDataParallel::finish_forward(const TensorList& outputs) { reducer_->expect_backward(outputs); }

DistributedDataParallel::NoSync::NoSync(DistributedDataParallel& ddp) : ddp_(ddp), previous_(ddp.reducer_->sync) {
  ddp_.reducer_->sync = false;
}

DistributedDataParallel::NoSync::~NoSync() { ddp_.reducer_->sync = previous_; }

std::string DistributedDataParallel::bucket_plan() const { return reducer_->plan(); }
double DistributedDataParallel::overlap_fraction() const { return reducer_->overlap_fraction(); }

}  // namespace ember::nn::parallel
