// Custom autograd Functions: the node that calls the user's backward, and
// the recording done by Function<T>::apply (see ember/custom_function.h).
#include "ember/custom_function.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "autograd/autograd_meta.h"
#include "autograd/functions.h"
#include "autograd/saved_variable.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::autograd {

// The backward of one apply() call. next_functions: one edge per argument
// slot (invalid for non-tensor slots and inputs that need no gradient).
class CustomFunctionNode final : public Node {
 public:
  CustomFunctionNode(std::string name, detail::BackwardFn backward) : name_(std::move(name)), backward_(backward) {
    ctx.node_ = this;
  }
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grad_outputs) override;
  void release_saved() override {
    for (SavedVariable& s : saved) s.release();
  }
  std::vector<std::pair<std::string, Tensor>> saved_tensors() const override {
    std::vector<std::pair<std::string, Tensor>> out;
    for (size_t i = 0; i < saved.size(); ++i)
      if (saved[i].defined()) out.emplace_back("saved" + std::to_string(i), saved[i].peek());
    return out;
  }

  TensorList unpack_saved() const {
    auto self = std::const_pointer_cast<Node>(shared_from_this());
    TensorList out;
    out.reserve(saved.size());
    for (const SavedVariable& s : saved) out.push_back(s.unpack(self));
    return out;
  }

  AutogradContext ctx;
  std::vector<SavedVariable> saved;
  std::vector<TensorMeta> slots;  // the forward arguments; `defined` is false for non-tensor slots

 private:
  std::string name_;
  detail::BackwardFn backward_;
};

// ---- AutogradContext ----

void AutogradContext::save_for_backward(tensor_list to_save) { to_save_ = std::move(to_save); }

tensor_list AutogradContext::get_saved_variables() const {
  EMBER_CHECK(node_, "get_saved_variables: this context belongs to no custom Function");
  return node_->unpack_saved();
}

void AutogradContext::mark_dirty(const tensor_list& inputs) { dirty_ = inputs; }

void AutogradContext::mark_non_differentiable(const tensor_list& outputs) { non_differentiable_ = outputs; }

bool AutogradContext::needs_input_grad(size_t i) const {
  EMBER_CHECK(node_, "needs_input_grad: this context belongs to no custom Function");
  const auto& edges = node_->next_functions();
  EMBER_CHECK(i < edges.size(), node_->name(), ": needs_input_grad(", i, ") but forward has ", edges.size(),
              " argument slots");
  return edges[i].valid();
}

// ---- the backward ----

TensorList CustomFunctionNode::apply(TensorList&& grad_outputs) {
  if (ctx.materialize_grads_) {
    for (size_t i = 0; i < grad_outputs.size(); ++i) {
      if (grad_outputs[i].defined()) continue;
      const InputMeta& m = input_meta().at(i);
      grad_outputs[i] = zeros(m.sizes, TensorOptions(m.dtype).device(m.device));
    }
  }
  TensorList grads = backward_(ctx, std::move(grad_outputs));
  EMBER_CHECK(grads.size() == slots.size(), name(), ": backward returned ", grads.size(), " gradients, expected ",
              slots.size(), " (one per argument of forward, an undefined tensor for non-tensor arguments)");
  for (size_t i = 0; i < grads.size(); ++i) {
    Tensor& g = grads[i];
    if (!g.defined()) continue;
    const TensorMeta& in = slots[i];
    EMBER_CHECK(in.defined, name(), ": backward returned a defined gradient for argument ", i,
                ", which is not a tensor (return an undefined Tensor there)");
    if (!next_[i].valid()) {  // nobody asked for it
      g = Tensor();
      continue;
    }
    EMBER_CHECK(g.sizes() == IntArrayRef(in.sizes), name(), ": backward returned a gradient of shape ", g.sizes(),
                " for argument ", i, " of shape ", IntArrayRef(in.sizes));
    if (g.dtype() != in.dtype || g.device() != in.device) g = g.to(in.device, in.dtype);
  }
  return grads;
}

// ---- recording (Function<T>::apply) ----

namespace detail {

namespace {

bool contains(const TensorList& list, const Tensor& t) {
  return std::any_of(list.begin(), list.end(), [&](const Tensor& x) { return x.is_same(t); });
}

bool is_leaf_requiring_grad(const Tensor& t) {
  const AutogradMeta* m = get_meta(t);
  return m && m->requires_grad && !m->grad_fn;
}

std::string describe_arguments(const std::vector<TensorMeta>& slots) {
  std::ostringstream os;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (i) os << ", ";
    if (slots[i].defined) os << "Tensor" << IntArrayRef(slots[i].sizes) << " " << slots[i].dtype;
    else os << "_";
  }
  return os.str();
}

}  // namespace

std::string type_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string full = status == 0 ? demangled : type.name();
  std::free(demangled);
  // Drop the scope: the last "::" outside template arguments and parentheses.
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i + 1 < full.size(); ++i) {
    const char c = full[i];
    if (c == '<' || c == '(') ++depth;
    else if (c == '>' || c == ')') --depth;
    else if (depth == 0 && c == ':' && full[i + 1] == ':') start = i + 2;
  }
  return full.substr(start);
}

CustomCall::CustomCall(const std::string& function_name, BackwardFn backward)
    : node_(std::make_shared<CustomFunctionNode>(function_name + "Backward", backward)),
      function_name_(function_name) {}

CustomCall::~CustomCall() = default;

void CustomCall::add_argument(const Tensor& t) {
  EMBER_CHECK(t.defined(), function_name_, ": argument ", inputs_.size(), " is an undefined tensor");
  inputs_.push_back(t);
  node_->slots.push_back(meta_of(t));
}

void CustomCall::add_argument(const TensorList& list) {
  for (const Tensor& t : list) add_argument(t);
}

void CustomCall::add_non_tensor_argument() {
  inputs_.emplace_back();
  node_->slots.emplace_back();
}

AutogradContext& CustomCall::start() {
  const bool record = is_grad_enabled() && std::any_of(inputs_.begin(), inputs_.end(),
                                                       [](const Tensor& t) { return requires_grad(t); });
  node_->mutable_next_functions() = record ? collect_next_edges(inputs_) : std::vector<Edge>(inputs_.size());
  node_->set_forward_description(function_name_ + "(" + describe_arguments(node_->slots) + ")");
  return node_->ctx;
}

Tensor CustomCall::finish(Tensor output) { return std::move(finish(TensorList{std::move(output)})[0]); }

TensorList CustomCall::finish(TensorList outputs) {
  AutogradContext& ctx = node_->ctx;
  const auto& edges = node_->next_functions();
  const bool record = std::any_of(edges.begin(), edges.end(), [](const Edge& e) { return e.valid(); });
  for (const Tensor& d : ctx.dirty_) {
    EMBER_CHECK(contains(inputs_, d), function_name_, ": mark_dirty got a tensor that is not an argument of forward");
    EMBER_CHECK(contains(outputs, d), function_name_,
                ": a tensor passed to mark_dirty must also be returned by forward");
  }
  const TensorList raw_outputs = outputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    EMBER_CHECK(out.defined(), function_name_, ": forward returned an undefined tensor as output ", i);
    if (!record) continue;
    const bool dirty = contains(ctx.dirty_, out);
    const bool differentiable = out.is_floating_point() && !contains(ctx.non_differentiable_, out);
    if (dirty) {
      EMBER_CHECK(!is_leaf_requiring_grad(out), function_name_, ": a leaf tensor that requires grad (", out.dtype(),
                  " ", out.sizes(), ") is being used in an in-place operation (mark_dirty); pass a clone of it");
      EMBER_CHECK(!out.is_view() || !requires_grad(out._base()), function_name_,
                  ": mark_dirty on a view of a tensor that requires grad is not supported; pass a clone");
    } else if (contains(inputs_, out)) {
      // An input returned as is: the output gets its own handle, so giving it
      // this node as history leaves the input's history alone.
      NoGradGuard no_grad;
      out = differentiable ? out.view_as(out) : data_alias(out);
    }
    if (differentiable) set_history(out, node_, static_cast<uint32_t>(i));
    else node_->add_input_meta(out);
  }
  if (record) {
    // Saved after the outputs are connected: a saved output is then kept as
    // a result of this node (without its history, see SavedVariable).
    for (const Tensor& t : ctx.to_save_) {
      auto it = std::find_if(raw_outputs.begin(), raw_outputs.end(), [&](const Tensor& o) { return o.is_same(t); });
      if (it == raw_outputs.end()) {
        node_->saved.emplace_back(t, false);
        continue;
      }
      const Tensor& out = outputs[static_cast<size_t>(it - raw_outputs.begin())];
      const AutogradMeta* m = get_meta(out);
      node_->saved.emplace_back(out, m && m->grad_fn == node_);
    }
  }
  ctx.to_save_.clear();
  ctx.dirty_.clear();
  ctx.non_differentiable_.clear();
  inputs_.clear();
  return outputs;
}

}  // namespace detail
}  // namespace ember::autograd
