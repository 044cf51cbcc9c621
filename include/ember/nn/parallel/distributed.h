// DistributedDataParallel: every rank trains a replica of the module on its
// share of the batch; gradients are averaged across ranks during backward.
//
//   auto pg = ember::distributed::init_process_group();
//   ember::nn::parallel::DistributedDataParallel ddp(model);   // rank 0's weights everywhere
//   ember::Tensor loss = ddp.forward([&] { return loss_fn(model(x), y); });
//   loss.backward();            // gradients arrive averaged over the ranks
//   optimizer.step();
//
// Note [Gradient buckets]
// Parameters are grouped into buckets (a flat tensor each) in reverse
// registration order, since backward produces the last layers' gradients
// first: the first bucket holds up to first_bucket_cap_mb (small, so the
// first all-reduce starts early), the others up to bucket_cap_mb. A hook on
// each parameter's gradient accumulator copies the gradient into its bucket;
// when a bucket's last gradient is in, its all-reduce (avg) starts on the
// group's worker thread while backward goes on with earlier layers. Buckets
// start in index order on every rank, so the collectives match across ranks.
// The hook of the last gradient waits for every bucket and writes the
// averaged gradients back. After the first iteration the buckets are rebuilt
// in the order the gradients actually became ready (rank 0's order, shared).
// The overlap fraction is the share of the all-reduce time (first launch to
// last completion) that passed before backward's last gradient was ready.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"

namespace ember::nn::parallel {

struct DistributedDataParallelOptions {
  double bucket_cap_mb = 25;
  double first_bucket_cap_mb = 1;
  // Parameters a forward may leave out of the graph. Off: a backward that
  // leaves some parameter without a gradient is an error at the next forward,
  // naming those parameters.
  bool find_unused_parameters = false;
  // Broadcast rank 0's buffers (batch-norm running stats) before each forward.
  bool broadcast_buffers = true;
  // Each parameter's .grad is a view into its bucket: no copies into and out
  // of the buckets, and no second copy of the gradients in memory.
  bool gradient_as_bucket_view = false;
};

class DistributedDataParallel {
 public:
  // Broadcasts rank 0's parameters and buffers; plans the buckets.
  explicit DistributedDataParallel(std::shared_ptr<Module> module, DistributedDataParallelOptions options = {},
                                   std::shared_ptr<distributed::ProcessGroup> group = nullptr);
  template <class M>
  explicit DistributedDataParallel(const ModuleHolder<M>& module, DistributedDataParallelOptions options = {},
                                   std::shared_ptr<distributed::ProcessGroup> group = nullptr)
      : DistributedDataParallel(std::static_pointer_cast<Module>(module.ptr()), options, std::move(group)) {}
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  // Runs `forward` (the module's forward, and the loss if you like) between
  // the steps DDP takes before and after a forward; returns its result.
  Tensor forward(const std::function<Tensor()>& forward);
  // The same two steps for callers that run the forward themselves.
  void prepare_forward();
  void finish_forward(const TensorList& outputs);

  // While a NoSync lives, backward accumulates gradients locally; the first
  // backward after it averages the accumulated gradients.
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp);
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  NoSync no_sync() { return NoSync(*this); }

  // The buckets: index, bytes, parameters in order.
  std::string bucket_plan() const;
  // The last synchronised backward's share of all-reduce time hidden behind
  // backward (Note [Gradient buckets]), in [0, 1].
  double overlap_fraction() const;
  const std::shared_ptr<Module>& module() const { return module_; }
  const std::shared_ptr<distributed::ProcessGroup>& process_group() const { return group_; }

  class Reducer;

 private:
  std::shared_ptr<Module> module_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<Reducer> reducer_;
};

}  // namespace ember::nn::parallel
