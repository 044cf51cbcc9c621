// Tensor's autograd methods (declared in ember/tensor.h).
#include "autograd/autograd_meta.h"
#include "autograd/functions.h"
#include "core/tensor_util.h"
#include "core/trace_escape.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

using autograd::AutogradMeta;
using autograd::ensure_meta;
using autograd::get_meta;

bool Tensor::requires_grad() const { return defined() && autograd::requires_grad(*this); }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  EMBER_CHECK(defined(), "requires_grad_: the tensor is undefined");
  AutogradMeta* m = get_meta(*this);
  if (!requires_grad) {
    EMBER_CHECK(!m || !m->grad_fn, "requires_grad_(false): the tensor has a grad_fn (", m && m->grad_fn ? m->grad_fn->name() : "",
                "); only leaves can stop requiring grad: use detach()");
    if (m) m->requires_grad = false;
    return *this;
  }
  EMBER_CHECK(is_floating_point(), "requires_grad_: only floating-point tensors can require grad, got ", dtype());
  if (m && m->grad_fn) return *this;
  ensure_meta(*this).requires_grad = true;
  impl()->set_key_set(impl()->key_set().add(DispatchKey::Autograd));
  return *this;
}

Tensor Tensor::grad() const {
  if (!defined()) detail::undefined_tensor("grad");
  const AutogradMeta* m = get_meta(*this);
  if (!m) return Tensor();
  if (m->retained_grad) return *m->retained_grad;
  return m->grad;
}

void Tensor::set_grad(const Tensor& grad) const {
  if (!defined()) detail::undefined_tensor("set_grad");
  EMBER_CHECK(!grad.defined() || grad.sizes() == sizes(), "set_grad: gradient of shape ", grad.defined() ? grad.sizes() : IntArrayRef(),
              " for a tensor of shape ", sizes());
  AutogradMeta& m = ensure_meta(*this);
  if (m.retained_grad) *m.retained_grad = grad;
  else m.grad = grad;
}

std::shared_ptr<Node> Tensor::grad_fn() const {
  if (!defined()) return nullptr;
  const AutogradMeta* m = get_meta(*this);
  if (impl()->view_base() || (m && m->grad_fn)) {
    Edge e = autograd::gradient_edge(*this);  // re-derives a stale view history
    if (e.valid() && !dynamic_cast<autograd::AccumulateGrad*>(e.function.get())) return e.function;
  }
  return nullptr;
}

std::string grad_fn_name(const Tensor& t) {
  const std::shared_ptr<Node> fn = t.grad_fn();
  return fn ? fn->name() : std::string();
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

uint32_t Tensor::output_nr() const {
  if (!defined()) detail::undefined_tensor("output_nr");
  const AutogradMeta* m = get_meta(*this);
  return m && m->grad_fn ? m->output_nr : 0;
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), "retain_grad: the tensor does not require grad");
  if (is_leaf()) return;  // leaves keep their gradient anyway
  std::shared_ptr<Node> fn = grad_fn();
  AutogradMeta& m = ensure_meta(*this);
  if (m.retained_grad) return;
  m.retained_grad = std::make_shared<Tensor>();
  autograd::attach_retain_hook(m, fn, output_nr());
}

bool Tensor::retains_grad() const {
  if (!defined()) detail::undefined_tensor("retains_grad");
  const AutogradMeta* m = get_meta(*this);
  return m && m->retained_grad;
}

void Tensor::set_data(const Tensor& new_data) const {
  EMBER_CHECK(defined() && new_data.defined(), "set_data: ", defined() ? "new_data" : "the tensor", " is undefined");
  EMBER_CHECK(is_leaf(), "set_data: only a leaf's data can be replaced; this tensor has grad_fn ", grad_fn()->name());
  EMBER_CHECK(!requires_grad() || new_data.is_floating_point(), "set_data: the tensor requires grad, so new_data ",
              "must be floating point, got ", new_data.dtype());
  const bool same_kind =
      dtype() == new_data.dtype() && device() == new_data.device() && sizes() == new_data.sizes();
  impl()->set_data_from(*new_data.impl());
  // The accumulator's input meta still describes the old data, and the engine
  // would convert incoming gradients to it; a fresh one is made on next use.
  AutogradMeta* m = get_meta(*this);
  if (!same_kind && m && m->grad_accumulator) {
    static_cast<autograd::AccumulateGrad*>(m->grad_accumulator.get())->forget_variable();
    autograd::release_node(std::move(m->grad_accumulator));
    m->grad_accumulator = nullptr;
  }
}

Tensor Tensor::detach() const {
  if (!defined()) detail::undefined_tensor("detach");
  Tensor out = autograd::data_alias(*this);
  detail::check_alias(*this, out);  // a traced graph reads the same value (core/trace_escape.h)
  return out;
}

Tensor& Tensor::detach_() {
  if (!defined()) detail::undefined_tensor("detach_");
  EMBER_CHECK(!impl()->view_base() || !autograd::requires_grad(*this),
              "detach_: cannot detach a view of a tensor that requires grad in place; use detach()");
  if (AutogradMeta* m = get_meta(*this)) {
    autograd::release_node(std::move(m->grad_fn));
    m->grad_fn = nullptr;
    m->requires_grad = false;
  }
  impl()->set_key_set(impl()->key_set().remove(DispatchKey::Autograd));
  return *this;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      const TensorList& inputs) const {
  if (!defined()) detail::undefined_tensor("backward");
  autograd::backward({*this}, gradient.defined() ? TensorList{gradient} : TensorList{}, retain_graph, create_graph,
                     inputs);
}

uint64_t Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad(), "register_hook: cannot register a hook on a tensor that does not require grad");
  const uint64_t id = autograd::next_hook_id();
  if (std::shared_ptr<Node> fn = grad_fn()) {
    fn->add_pre_hook(output_nr(), id, std::move(hook));
    ensure_meta(*this).hook_nodes.emplace_back(id, fn);
  } else {
    ensure_meta(*this).leaf_hooks.push_back({id, std::move(hook)});
  }
  return id;
}

void Tensor::remove_hook(uint64_t handle) const {
  if (!defined()) detail::undefined_tensor("remove_hook");
  AutogradMeta* m = get_meta(*this);
  if (!m) return;
  std::erase_if(m->leaf_hooks, [handle](const AutogradMeta::LeafHook& h) { return h.id == handle; });
  std::erase_if(m->post_accumulate_hooks, [handle](const auto& h) { return h.first == handle; });
  for (auto& [id, node] : m->hook_nodes)
    if (id == handle)
      if (std::shared_ptr<Node> n = node.lock()) n->remove_pre_hook(handle);
  std::erase_if(m->hook_nodes, [handle](const auto& h) { return h.first == handle; });
}

uint64_t Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad() && is_leaf(),
              "register_post_accumulate_grad_hook: only leaves that require grad accumulate gradients");
  const uint64_t id = autograd::next_hook_id();
  ensure_meta(*this).post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

bool Tensor::is_view() const { return defined() && impl()->view_base() != nullptr; }

Tensor Tensor::_base() const {
  if (!is_view()) return Tensor();
  return Tensor(IntrusivePtr<TensorImpl>(impl()->view_base()));
}

}  // namespace ember
