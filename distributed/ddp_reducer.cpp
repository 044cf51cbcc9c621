#include "distributed/ddp_reducer.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <unordered_set>

#include "autograd/functions.h"
#include "distributed/ddp_buckets.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::nn::parallel {

using distributed::ReduceOp;

DistributedDataParallel::Reducer::Reducer(const NamedTensors& parameters,
                                          std::shared_ptr<distributed::ProcessGroup> group,
                                          const DistributedDataParallelOptions& options)
    : group_(std::move(group)), options_(options) {
  for (const auto& p : parameters)
    if (p.value().requires_grad()) parameters_.push_back({p.key(), p.value()});
  EMBER_CHECK(!parameters_.empty(), "DistributedDataParallel: the module has no parameter that requires grad");
  std::vector<size_t> reverse(parameters_.size());
  for (size_t i = 0; i < reverse.size(); ++i) reverse[i] = reverse.size() - 1 - i;
  build(reverse);
  for (size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i].hook = parameters_[i].tensor.register_post_accumulate_grad_hook([this, i](const Tensor&) {
      on_gradient(i);
    });
  ready_.assign(parameters_.size(), 0);
}

// A bucket's all-reduce still in flight holds its own reference to the flat
// tensor, so nothing here waits for it.
DistributedDataParallel::Reducer::~Reducer() {
  for (Parameter& p : parameters_) p.tensor.remove_hook(p.hook);
}

void DistributedDataParallel::Reducer::build(const std::vector<size_t>& order) {
  std::vector<size_t> bytes;
  std::vector<DType> dtypes;
  for (const Parameter& p : parameters_) {
    bytes.push_back(p.tensor.nbytes());
    dtypes.push_back(p.tensor.dtype());
  }
  const auto mib = [](double mb) { return static_cast<size_t>(mb * 1024 * 1024); };
  buckets_.clear();
  for (auto& members : distributed::assign_buckets(order, bytes, dtypes, mib(options_.first_bucket_cap_mb),
                                                   mib(options_.bucket_cap_mb))) {
    Bucket b;
    int64_t numel = 0;
    for (size_t i : members) {
      parameters_[i].bucket = buckets_.size();
      parameters_[i].offset = numel;
      numel += parameters_[i].tensor.numel();
    }
    b.flat = zeros({numel}, parameters_[members.front()].tensor.dtype());
    b.parameters = std::move(members);
    buckets_.push_back(std::move(b));
  }
  if (options_.gradient_as_bucket_view) attach_grads_to_buckets();
}

Tensor DistributedDataParallel::Reducer::bucket_view(size_t i) const {
  const Parameter& p = parameters_[i];
  return buckets_[p.bucket].flat.narrow(0, p.offset, p.tensor.numel()).view(p.tensor.sizes());
}

// A gradient that is not its slot's view (none yet, zero_grad set it to
// none, or the buckets were rebuilt) moves into the slot.
void DistributedDataParallel::Reducer::attach_grads_to_buckets() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    Tensor view = bucket_view(i);
    const Tensor g = parameters_[i].tensor.grad();
    if (g.defined() && g.data_ptr() == view.data_ptr()) continue;
    if (g.defined())
      view.copy_(g);
    else
      view.zero_();
    parameters_[i].tensor.set_grad(view);
  }
}

void DistributedDataParallel::Reducer::check_previous_iteration() {
  if (armed_ && num_from_backward_ > 0) {
    std::ostringstream unused;
    size_t count = 0;
    for (size_t i = 0; i < parameters_.size(); ++i)
      if (!ready_[i]) unused << (count++ ? ", " : "") << parameters_[i].name;
    armed_ = false;
    EMBER_FAIL("DistributedDataParallel: the previous backward produced no gradient for ", count,
               " parameter(s): ", unused.str(),
               ". Pass find_unused_parameters=true when a forward may leave parameters out.");
  }
  armed_ = false;
}

void DistributedDataParallel::Reducer::expect_backward(const TensorList& outputs) {
  if (options_.gradient_as_bucket_view) attach_grads_to_buckets();
  if (!sync || !is_grad_enabled()) return;
  armed_ = true;
  std::fill(ready_.begin(), ready_.end(), 0);
  num_ready_ = 0;
  num_from_backward_ = 0;
  next_launch_ = 0;
  ready_order_.clear();
  for (Bucket& b : buckets_) {
    b.pending = b.parameters.size();
    b.work.reset();
  }
  if (!options_.find_unused_parameters) return;
  // The leaves the outputs' graph reaches; every other parameter is ready now.
  std::unordered_set<const TensorImpl*> reached;
  std::unordered_set<const Node*> seen;
  std::vector<std::shared_ptr<Node>> stack;
  for (const Tensor& t : outputs)
    if (t.defined() && t.grad_fn()) stack.push_back(t.grad_fn());
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(n.get()).second) continue;
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(n.get())) reached.insert(acc->variable().impl());
    for (const Edge& e : n->next_functions())
      if (e.valid()) stack.push_back(e.function);
  }
  for (size_t i = 0; i < parameters_.size(); ++i)
    if (!reached.count(parameters_[i].tensor.impl())) mark_ready(i);
}

void DistributedDataParallel::Reducer::on_gradient(size_t i) {
  if (!armed_ || ready_[i]) return;
  ++num_from_backward_;
  mark_ready(i);
}

void DistributedDataParallel::Reducer::mark_ready(size_t i) {
  Parameter& p = parameters_[i];
  Bucket& b = buckets_[p.bucket];
  {
    NoGradGuard no_grad;
    Tensor slot = bucket_view(i);
    const Tensor g = p.tensor.grad();
    if (!g.defined())
      slot.zero_();
    else if (g.data_ptr() != slot.data_ptr())
      slot.copy_(g);
  }
  ready_[i] = 1;
  ++num_ready_;
  ready_order_.push_back(i);
  if (--b.pending == 0) launch_ready_buckets();
  if (num_ready_ == parameters_.size()) finish();
}

void DistributedDataParallel::Reducer::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    if (next_launch_ == 0) first_launch_ = Clock::now();
    Bucket& b = buckets_[next_launch_++];
    b.work = group_->all_reduce(b.flat, ReduceOp::AVG);
  }
}

void DistributedDataParallel::Reducer::finish() {
  armed_ = false;
  const Clock::time_point backward_done = Clock::now();
  for (Bucket& b : buckets_) b.work->wait();
  const Clock::time_point reduced = Clock::now();
  const double total = std::chrono::duration<double>(reduced - first_launch_).count();
  const double hidden = std::chrono::duration<double>(backward_done - first_launch_).count();
  overlap_ = total > 0 ? std::clamp(hidden / total, 0.0, 1.0) : 1.0;
  NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Tensor reduced_grad = bucket_view(i);
    Tensor g = parameters_[i].tensor.grad();
    if (!g.defined())
      parameters_[i].tensor.set_grad(options_.gradient_as_bucket_view ? reduced_grad : reduced_grad.clone());
    else if (g.data_ptr() != reduced_grad.data_ptr())
      g.copy_(reduced_grad);
  }
  if (!rebuilt_) rebuild_from_ready_order();
}

// Rank 0's ready order, shared so that every rank builds the same buckets.
void DistributedDataParallel::Reducer::rebuild_from_ready_order() {
  rebuilt_ = true;
  Tensor order = empty({static_cast<int64_t>(parameters_.size())}, kInt64);
  auto* o = order.data_ptr<int64_t>();
  for (size_t k = 0; k < ready_order_.size(); ++k) o[k] = static_cast<int64_t>(ready_order_[k]);
  group_->broadcast(order, 0)->wait();
  std::vector<size_t> rebuilt(parameters_.size());
  std::vector<char> seen(parameters_.size(), 0);
  for (size_t k = 0; k < rebuilt.size(); ++k) {
    const auto i = static_cast<size_t>(o[k]);
    EMBER_CHECK(i < parameters_.size() && !seen[i], "DistributedDataParallel: rank 0's gradient order is invalid");
    seen[i] = 1;
    rebuilt[k] = i;
  }
  build(rebuilt);
}

std::string DistributedDataParallel::Reducer::plan() const {
  std::ostringstream os;
  os << "DistributedDataParallel: " << buckets_.size() << " bucket(s), " << parameters_.size() << " parameters, "
     << (rebuilt_ ? "in the order gradients became ready" : "in reverse registration order") << "\n";
  for (size_t k = 0; k < buckets_.size(); ++k) {
    const Bucket& b = buckets_[k];
    os << "  bucket " << k << ": " << std::fixed << std::setprecision(3)
       << static_cast<double>(b.flat.nbytes()) / (1024.0 * 1024.0) << " MiB " << b.flat.dtype() << ", "
       << b.parameters.size() << " parameter(s):";
    for (size_t i : b.parameters) os << " " << parameters_[i].name;
    os << "\n";
  }
  return os.str();
}

}  // namespace ember::nn::parallel
