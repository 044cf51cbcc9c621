// The Autograd dispatch key's kernel: one boxed function for every op
// (Note [How autograd records] in ember/autograd.h).
#include <memory>
#include <sstream>

#include "autograd/autograd_meta.h"
#include "autograd/formula.h"
#include "autograd/functions.h"
#include "core/dispatcher.h"
#include "ember/error.h"

namespace ember::autograd {

namespace {

bool is_tensor_slot(const OpSchema& s, size_t arg) {
  return arg < s.args.size() && s.args[arg].type.starts_with("Tensor");
}

// "mul(Tensor[2, 3] float32, Tensor[3] float32)": names the forward call in
// anomaly-mode errors.
std::string describe_call(const OpEntry& op, const Stack& args) {
  std::ostringstream os;
  os << op.name() << "(";
  for (size_t i = 0; i < args.size(); ++i) os << (i ? ", " : "") << args[i].to_string();
  os << ")";
  return os.str();
}

void run_below_autograd(const OpEntry& op, DispatchKeySet keys, Stack& stack) {
  ExcludeKeysGuard guard(DispatchKey::Autograd);
  Dispatcher::call_boxed(op, keys & DispatchKeySet::below(DispatchKey::Autograd), stack);
}

bool is_tracked_leaf(const Tensor& t) {
  const AutogradMeta* m = get_meta(t);
  return m && m->requires_grad && !m->grad_fn;
}

void check_in_place_target(const OpEntry& op, const Tensor& self) {
  EMBER_CHECK(!is_tracked_leaf(self), op.name(), ": a leaf tensor that requires grad (", self.dtype(), " ",
              self.sizes(), ") is being used in an in-place operation; use NoGradGuard for updates such as "
              "optimiser steps, or clone() it first");
  if (TensorImpl* base = self.impl()->view_base()) {
    EMBER_CHECK(!is_tracked_leaf(Tensor(IntrusivePtr<TensorImpl>(base))), op.name(),
                ": a view of a leaf tensor that requires grad (view ", self.sizes(), " of base ", base->sizes(),
                ") is being used in an in-place operation; use NoGradGuard, or clone() the leaf first");
  }
}

// After an in-place op on a view: the base's history becomes CopySlices over
// the op's node, and the view's history is re-derived from the base's.
void rebase_view_history(const Tensor& view, const std::shared_ptr<FormulaNode>& fn, Edge base_edge) {
  Tensor base(IntrusivePtr<TensorImpl>(view.impl()->view_base()));
  fn->add_input_meta(view);
  auto copy_slices = std::make_shared<CopySlices>(base, view, fn, std::move(base_edge));
  copy_slices->set_forward_description(fn->forward_description());
  set_history(base, copy_slices, 0);
  ensure_meta(view).requires_grad = false;
  // The op bumped the storage version, so the view's history is stale: this
  // re-derives it from the base's new history.
  gradient_edge(view);
}

void autograd_kernel(const OpEntry& op, DispatchKeySet keys, Stack& stack) {
  const OpSchema& schema = op.schema();
  // Does any input want a gradient? (The node records which, per input.)
  size_t first_wanting = 0, slot = 0;
  bool any = false;
  auto consider = [&](const Tensor& t) {
    if (!any && t.defined() && is_floating_point(t.dtype()) && requires_grad(t)) {
      any = true;
      first_wanting = slot;
    }
    ++slot;
  };
  for (size_t a = 0; a < stack.size() && !any; ++a) {
    const IValue& v = stack[a];
    if (v.is_tensor()) consider(v.tensor());
    else if (v.is_tensor_list())
      for (const Tensor& t : v.tensor_list()) consider(t);
    else if (v.is_none() && is_tensor_slot(schema, a)) ++slot;
  }
  const OpAutogradInfo& info = op_autograd_info(op);
  if (!any || info.non_differentiable) {
    run_below_autograd(op, keys, stack);
    return;
  }
  const Formula* formula = info.formula;
  if (!formula) {
    EMBER_FAIL(op.name(), ": no derivative formula is registered for this op, but its tensor input ", first_wanting,
               " requires grad; call it under NoGradGuard or on detach()ed inputs");
  }

  const bool in_place = info.in_place;
  Tensor self;
  Tensor original_self;
  Edge base_edge;
  const bool on_view = in_place && stack[0].tensor().impl()->view_base() != nullptr;
  if (in_place) {
    self = stack[0].tensor();
    check_in_place_target(op, self);
    if (on_view) base_edge = gradient_edge(Tensor(IntrusivePtr<TensorImpl>(self.impl()->view_base())));
  }

  auto node = std::make_shared<FormulaNode>(op, *formula);
  node->record_arguments(stack, /*with_layout=*/info.view);
  if (in_place) {
    // The formula reads values from before the op: self, and any other
    // argument sharing self's storage (x.mul_(x)) gets a copy taken now. The
    // copies are recorded, so second derivatives flow through them.
    for (size_t a = 0; a < stack.size(); ++a) {
      if (!node->saves_arg(a) || !stack[a].is_tensor()) continue;
      const Tensor& t = stack[a].tensor();
      if (!t.defined() || t.impl()->storage() != self.impl()->storage()) continue;
      if (!original_self.defined()) original_self = self.clone();
      node->save_original(a, t.is_same(self) ? original_self : t.clone());
    }
  }
  if (is_anomaly_enabled()) node->set_forward_description(describe_call(op, stack));

  run_below_autograd(op, keys, stack);

  if (in_place) {
    if (!is_floating_point(self.dtype())) return;
    if (on_view) {
      rebase_view_history(self, node, std::move(base_edge));
    } else {
      set_history(self, node, 0);
    }
    node->record_results(stack);
    return;
  }
  for (size_t i = 0; i < stack.size(); ++i) {
    const Tensor& out = stack[i].tensor();
    if (is_floating_point(out.dtype())) set_history(out, node, static_cast<uint32_t>(i));
    else node->add_input_meta(out);
  }
  node->record_results(stack);
}

}  // namespace

void install_autograd() {
  build_op_autograd_info();
  Dispatcher::instance().set_fallback(DispatchKey::Autograd, &autograd_kernel, "autograd (record, then run below)");
}

}  // namespace ember::autograd
