#include "autograd/autograd_meta.h"

#include <atomic>

#include "autograd/functions.h"
#include "core/dispatcher.h"
#include "core/tensor_util.h"
#include "ember/error.h"

namespace ember {

// ---- grad mode ----
// Grad mode *is* the Autograd key in the thread-local exclude set: with grad
// off, calls skip the autograd layer entirely and cost nothing extra.
bool is_grad_enabled() { return !local_dispatch_keys().excluded.has(DispatchKey::Autograd); }

void set_grad_enabled(bool enabled) {
  user_grad_mode() = enabled;
  DispatchKeySet& ex = local_dispatch_keys().excluded;
  ex = enabled ? ex.remove(DispatchKey::Autograd) : ex.add(DispatchKey::Autograd);
}

namespace {
thread_local bool inference_mode = false;
}  // namespace

bool is_inference_mode_enabled() { return inference_mode; }

InferenceMode::InferenceMode(bool enabled) : prev_grad_(is_grad_enabled()), prev_inference_(inference_mode) {
  inference_mode = enabled;
  if (enabled) set_grad_enabled(false);
}
InferenceMode::~InferenceMode() {
  inference_mode = prev_inference_;
  set_grad_enabled(prev_grad_);
}

// ---- Node ----
namespace {
std::atomic<uint64_t> next_sequence_nr{0};
}  // namespace

Node::Node() : sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

uint64_t autograd::next_node_sequence_nr() { return next_sequence_nr.load(std::memory_order_relaxed); }

Node::~Node() {
  for (Edge& e : next_) autograd::release_node(std::move(e.function));
}

uint32_t Node::add_input_meta(const Tensor& t) {
  InputMeta& m = input_meta_.emplace_back();
  m.sizes.assign(t.sizes().begin(), t.sizes().end());
  m.dtype = t.dtype();
  m.device = t.device();
  return static_cast<uint32_t>(input_meta_.size() - 1);
}

void Node::add_pre_hook(uint32_t output_nr, uint64_t id, PreHook h) {
  pre_hooks_.push_back({output_nr, id, std::move(h)});
}

void Node::remove_pre_hook(uint64_t id) {
  std::erase_if(pre_hooks_, [id](const HookEntry& e) { return e.id == id; });
}

Tensor Node::run_pre_hooks(uint32_t output_nr, Tensor grad) const {
  for (const HookEntry& h : pre_hooks_) {
    if (h.output_nr != output_nr) continue;
    Tensor replaced = h.fn(grad);
    if (replaced.defined()) grad = std::move(replaced);
  }
  return grad;
}

namespace autograd {

// ---- releasing long chains ----
// Destroying a node releases its edges and saved tensors, which may destroy
// the next node, and so on: a long chain would recurse once per node. The
// outermost release instead collects the nodes to destroy and frees them in
// a loop; nested releases just append to the list.
namespace {
thread_local std::vector<std::shared_ptr<Node>>* pending_releases EMBER_HOT_TLS = nullptr;
}  // namespace

void release_node(std::shared_ptr<Node>&& node) {
  if (!node) return;
  if (node.use_count() > 1) {  // not the last owner: nothing gets destroyed here
    node.reset();
    return;
  }
  // The node dies, but none of its edges is the last owner of its node: no
  // chain follows, so it can go directly.
  bool chain = false;
  for (const Edge& e : node->next_functions()) chain = chain || (e.function && e.function.use_count() == 1);
  if (!chain) {
    node.reset();
    return;
  }
  if (pending_releases) {
    pending_releases->push_back(std::move(node));
    return;
  }
  thread_local std::vector<std::shared_ptr<Node>> queue;  // keeps its capacity between releases
  pending_releases = &queue;
  queue.push_back(std::move(node));
  while (!queue.empty()) {
    std::shared_ptr<Node> n = std::move(queue.back());
    queue.pop_back();
    // Hand the edges over first, so the node's destructor frees no chain.
    for (Edge& e : n->mutable_next_functions()) release_node(std::move(e.function));
    n.reset();
  }
  pending_releases = nullptr;
}

AutogradMeta::~AutogradMeta() {
  if (grad_accumulator) static_cast<AccumulateGrad*>(grad_accumulator.get())->forget_variable();
  release_node(std::move(grad_accumulator));
  release_node(std::move(grad_fn));
}

AutogradMeta* get_meta(const Tensor& t) { return static_cast<AutogradMeta*>(t.impl()->autograd_meta()); }

AutogradMeta& ensure_meta(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (!m) {
    auto owned = std::make_unique<AutogradMeta>();
    m = owned.get();
    t.impl()->set_autograd_meta(std::move(owned));
  }
  return *m;
}

namespace {

bool view_history_is_stale(const Tensor& t, const AutogradMeta* m) {
  TensorImpl* base = t.impl()->view_base();
  if (!base) return false;
  const AutogradMeta* bm = static_cast<const AutogradMeta*>(base->autograd_meta());
  const bool base_tracked = bm && (bm->requires_grad || bm->grad_fn);
  if (!base_tracked) return false;
  if (!m || !m->grad_fn) return !m || !m->requires_grad;  // a view of a tracked base made outside autograd
  return m->history_is_view && m->attr_version != t._version();
}

}  // namespace

bool requires_grad(const Tensor& t) {
  if (!t.defined()) return false;
  const AutogradMeta* m = get_meta(t);
  if (m && (m->requires_grad || m->grad_fn)) return true;
  TensorImpl* base = t.impl()->view_base();
  if (!base) return false;
  const AutogradMeta* bm = static_cast<const AutogradMeta*>(base->autograd_meta());
  return bm && (bm->requires_grad || bm->grad_fn) && is_floating_point(t.dtype());
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};
  AutogradMeta* m = get_meta(t);
  if (view_history_is_stale(t, m)) {
    Tensor base(IntrusivePtr<TensorImpl>(t.impl()->view_base()));
    auto fn = std::make_shared<ViewOfBase>(base, t);
    fn->mutable_next_functions().push_back(gradient_edge(base));
    AutogradMeta& vm = ensure_meta(t);
    fn->add_input_meta(t);
    if (vm.retained_grad) attach_retain_hook(vm, fn, 0);
    release_node(std::move(vm.grad_fn));
    vm.grad_fn = fn;
    vm.output_nr = 0;
    vm.history_is_view = true;
    vm.attr_version = t._version();
    t.impl()->set_key_set(t.impl()->key_set().add(DispatchKey::Autograd));
    return {fn, 0};
  }
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  std::lock_guard<std::mutex> lock(m->accumulator_mutex);
  if (!m->grad_accumulator) m->grad_accumulator = std::make_shared<AccumulateGrad>(t);
  return {m->grad_accumulator, 0};
}

void attach_retain_hook(AutogradMeta& m, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  if (m.grad_fn && m.retain_hook_id) m.grad_fn->remove_pre_hook(m.retain_hook_id);
  m.retain_hook_id = next_hook_id();
  std::weak_ptr<Tensor> cell = m.retained_grad;
  fn->add_pre_hook(output_nr, m.retain_hook_id, [cell](const Tensor& g) {
    if (std::shared_ptr<Tensor> c = cell.lock()) {
      if (!c->defined()) *c = is_grad_enabled() ? g : g.clone();
      else *c = *c + g;
    }
    return Tensor();
  });
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = ensure_meta(t);
  if (output_nr == fn->num_inputs()) fn->add_input_meta(t);
  if (m.retained_grad) attach_retain_hook(m, fn, output_nr);
  release_node(std::move(m.grad_fn));
  m.grad_fn = fn;
  m.output_nr = output_nr;
  m.requires_grad = false;
  m.history_is_view = t.impl()->view_base() != nullptr;
  m.attr_version = t._version();
  t.impl()->set_key_set(t.impl()->key_set().add(DispatchKey::Autograd));
}

std::vector<Edge> collect_next_edges(const TensorList& inputs) {
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(requires_grad(t) ? gradient_edge(t) : Edge{});
  return edges;
}

Tensor data_alias(const Tensor& t) {
  auto impl = make_intrusive<TensorImpl>(t.impl()->storage(), t.dtype(), t.sizes(), t.strides(), t.storage_offset());
  impl->set_wrapped_number(t.impl()->is_wrapped_number());
  return Tensor(std::move(impl));
}

uint64_t next_hook_id() {
  static std::atomic<uint64_t> id{1};
  return id.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace autograd
}  // namespace ember
