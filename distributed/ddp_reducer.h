// The part of DistributedDataParallel that runs during backward: buckets,
// the gradient hooks, and the all-reduces they start (Note [Gradient
// buckets] in ember/nn/parallel/distributed.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/nn/parallel/distributed.h"

namespace ember::nn::parallel {

class DistributedDataParallel::Reducer {
 public:
  Reducer(const NamedTensors& parameters, std::shared_ptr<distributed::ProcessGroup> group,
          const DistributedDataParallelOptions& options);
  ~Reducer();

  // Before a forward: raises when the previous backward left parameters
  // without gradients (naming them); forgets an iteration that had no backward.
  void check_previous_iteration();
  // After a forward that records a graph: expect a backward. With
  // find_unused_parameters, parameters the outputs do not reach are ready now.
  void expect_backward(const TensorList& outputs);

  bool sync = true;  // false inside no_sync()
  std::string plan() const;
  double overlap_fraction() const { return overlap_; }

 private:
  struct Parameter {
    std::string name;
    Tensor tensor;
    uint64_t hook = 0;
    size_t bucket = 0;
    int64_t offset = 0;  // in the bucket's flat tensor, in elements
  };
  struct Bucket {
    std::vector<size_t> parameters;
    Tensor flat;
    size_t pending = 0;
    std::shared_ptr<distributed::Work> work;
  };
  using Clock = std::chrono::steady_clock;

  void build(const std::vector<size_t>& order);
  // The slot of parameter i in its bucket, shaped like the parameter.
  Tensor bucket_view(size_t i) const;
  // gradient_as_bucket_view: makes every .grad the view of its slot.
  void attach_grads_to_buckets();
  void on_gradient(size_t i);
  void mark_ready(size_t i);
  void launch_ready_buckets();
  void finish();
  void rebuild_from_ready_order();

  std::vector<Parameter> parameters_;
  std::vector<Bucket> buckets_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  DistributedDataParallelOptions options_;
  bool armed_ = false;  // a backward is expected
  std::vector<char> ready_;
  size_t num_ready_ = 0;
  size_t num_from_backward_ = 0;
  size_t next_launch_ = 0;
  std::vector<size_t> ready_order_;
  bool rebuilt_ = false;
  Clock::time_point first_launch_;
  double overlap_ = 0;
};

}  // namespace ember::nn::parallel
