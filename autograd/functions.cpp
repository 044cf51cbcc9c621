#include "autograd/functions.h"

#include <cctype>
#include <sstream>

#include "autograd/autograd_meta.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {
void fill_meta(TensorMeta& m, const Tensor& t, bool with_layout) {
  if (!t.defined()) return;
  m.sizes.assign(t.sizes().begin(), t.sizes().end());
  if (with_layout) {
    m.strides.assign(t.strides().begin(), t.strides().end());
    m.storage_offset = t.storage_offset();
  }
  m.dtype = t.dtype();
  m.device = t.device();
  m.defined = true;
  m.requires_grad = requires_grad(t);
}
}  // namespace

TensorMeta meta_of(const Tensor& t, bool with_layout) {
  TensorMeta m;
  fill_meta(m, t, with_layout);
  return m;
}

// ---- AccumulateGrad ----

namespace {

// Whether only `g` sees its memory: its handle is the only one and, when it is
// a view (as t()'s backward returns), its base is held by it alone and the
// storage by the two of them. Under create_graph a view keeps its history, so
// then only plain tensors qualify.
bool owns_its_memory(const Tensor& g) {
  if (!g.impl_ptr().unique()) return false;
  const TensorImpl* base = g.impl()->view_base();
  if (base == nullptr) return true;
  return !is_grad_enabled() && base->use_count() == 1 && g.impl()->storage()->use_count() == 2;
}

}  // namespace

AccumulateGrad::AccumulateGrad(const Tensor& variable) : variable_(variable.impl()) { add_input_meta(variable); }

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads.at(0));
  const Tensor variable = this->variable();
  if (!g.defined() || !variable.defined()) return {};
  AutogradMeta& m = ensure_meta(variable);
  std::unique_lock<std::mutex> lock(mutex_);
  if (!m.grad.defined()) {
    // Take the incoming gradient as is when nobody else can see its memory; a
    // shared one (e.g. add's backward passes one tensor to both inputs) is
    // copied, so a later in-place accumulation cannot change another tensor's
    // gradient. Under create_graph the clone is recorded, so the gradient
    // keeps its graph.
    if (g.is_contiguous() && owns_its_memory(g)) {
      g.impl()->set_view_base({});  // a view only its holder sees becomes a plain tensor
      m.grad = std::move(g);
    } else {
      m.grad = g.clone();
    }
  } else if (is_grad_enabled()) {
    m.grad = m.grad + g;
  } else {
    m.grad.add_(g);
  }
  lock.unlock();
  for (auto& [id, hook] : m.post_accumulate_hooks) hook(variable);
  return {};
}

// ---- FormulaNode ----

FormulaNode::FormulaNode(const OpEntry& op, const Formula& formula) : op_(op), formula_(formula) {}

std::string FormulaNode::name() const {
  // "index_put_" -> "IndexPutBackward"
  std::string out;
  bool upper = true;
  for (char c : op_.name()) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "Backward";
}

bool FormulaNode::saves_arg(size_t arg) const {
  for (int a : formula_.save)
    if (static_cast<size_t>(a) == arg) return true;
  return false;
}

void FormulaNode::record_arguments(const Stack& args, bool with_layout) {
  const size_t n = args.size();
  EMBER_CHECK(n <= 64, op_.name(), ": too many arguments for autograd (", n, ")");
  args_.resize(n);
  const bool saves_any = !formula_.save.empty();
  inputs_.reserve(n);
  next_.reserve(n);
  uint32_t slot = 0;
  auto add_input = [&](const Tensor& t, bool save) {
    Input& in = inputs_.emplace_back();
    fill_meta(in.meta, t, with_layout);
    if (save) in.saved = SavedVariable(t, false);
    const bool wants_grad = in.meta.requires_grad && is_floating_point(in.meta.dtype);
    next_.push_back(wants_grad ? gradient_edge(t) : Edge{});
    ++slot;
  };
  for (size_t a = 0; a < n; ++a) {
    args_[a].first_slot = slot;
    const IValue& v = args[a];
    const bool save = saves_any && saves_arg(a);
    if (v.is_tensor()) {
      add_input(v.tensor(), save);
    } else if (v.is_tensor_list()) {
      list_args_ |= uint64_t{1} << a;
      for (const Tensor& t : v.tensor_list()) add_input(t, save);
    } else if (v.is_none() && a < op_.schema().args.size() && op_.schema().args[a].type.starts_with("Tensor")) {
      add_input(Tensor(), false);  // an absent Tensor?
    } else {
      args_[a].value = v;
    }
    args_[a].end_slot = slot;
  }
  num_slots_ = slot;
}

void FormulaNode::save_original(size_t arg, const Tensor& original) {
  inputs_.at(args_.at(arg).first_slot).saved = SavedVariable(original, false);
}

void FormulaNode::record_results(const Stack& results) {
  if (!formula_.save_result) return;
  saved_results_.reserve(results.size());
  for (const IValue& r : results) saved_results_.emplace_back(r.tensor(), true);
}

TensorList FormulaNode::apply(TensorList&& grads) {
  if (released_) fail_released();
  TensorList in(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    const InputMeta& rm = input_meta().at(i);  // this node's inputs are the op's results
    if (!is_floating_point(rm.dtype)) continue;  // integer results carry no gradient
    in[i] = grads[i].defined() ? std::move(grads[i]) : zeros(rm.sizes, TensorOptions(rm.dtype).device(rm.device));
  }
  TensorList out = formula_.backward(*this, in);
  EMBER_CHECK(out.size() == num_slots_, name(), ": the derivative formula of ", op_.name(), " returned ", out.size(),
              " gradients for ", num_slots_, " inputs");
  return out;
}

void FormulaNode::release_saved() {
  for (Input& in : inputs_) in.saved.release();
  for (SavedVariable& s : saved_results_) s.release();
  released_ = !formula_.save.empty() || formula_.save_result;
}

void FormulaNode::fail_released() const {
  EMBER_FAIL("backward through ", name(), " (forward op ", op_.name(),
             ") a second time: its saved tensors were freed after the first backward "
             "(call backward with retain_graph=true the first time)");
}

std::vector<std::pair<std::string, Tensor>> FormulaNode::saved_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  const auto& args = op_.schema().args;
  for (size_t a = 0; a < args_.size(); ++a) {
    const std::string arg_name = a < args.size() ? args[a].name : "arg" + std::to_string(a);
    for (uint32_t k = args_[a].first_slot; k < args_[a].end_slot; ++k) {
      const std::string suffix = (list_args_ >> a) & 1 ? "[" + std::to_string(k - args_[a].first_slot) + "]" : "";
      if (inputs_[k].saved.defined()) out.emplace_back(arg_name + suffix, inputs_[k].saved.peek());
    }
  }
  for (size_t i = 0; i < saved_results_.size(); ++i)
    if (saved_results_[i].defined()) out.emplace_back("result" + std::to_string(i), saved_results_[i].peek());
  return out;
}

Tensor FormulaNode::saved(size_t arg) const {
  EMBER_CHECK(saves_arg(arg) && arg < args_.size() && args_[arg].first_slot < args_[arg].end_slot, name(),
              ": the formula reads argument ", arg, " of ", op_.name(), " but Formula::save does not list it");
  if (released_) fail_released();
  return inputs_[args_[arg].first_slot].saved.unpack(std::const_pointer_cast<Node>(shared_from_this()));
}

TensorList FormulaNode::saved_list(size_t arg) const {
  EMBER_CHECK(saves_arg(arg) && ((list_args_ >> arg) & 1), name(), ": argument ", arg, " of ", op_.name(),
              " is not a saved tensor list");
  if (released_) fail_released();
  TensorList out;
  auto self = std::const_pointer_cast<Node>(shared_from_this());
  for (uint32_t k = args_[arg].first_slot; k < args_[arg].end_slot; ++k) out.push_back(inputs_[k].saved.unpack(self));
  return out;
}

Tensor FormulaNode::result(size_t i) const {
  EMBER_CHECK(i < saved_results_.size(), name(), ": the formula reads result ", i, " of ", op_.name(),
              " but Formula::save_result is not set");
  if (released_) fail_released();
  return saved_results_[i].unpack(std::const_pointer_cast<Node>(shared_from_this()));
}

const IValue& FormulaNode::value(size_t arg) const { return args_.at(arg).value; }

const TensorMeta& FormulaNode::meta(size_t arg, size_t elem) const { return inputs_[slot(arg, elem)].meta; }

size_t FormulaNode::list_size(size_t arg) const { return args_.at(arg).end_slot - args_[arg].first_slot; }

size_t FormulaNode::slot(size_t arg, size_t elem) const {
  EMBER_CHECK(arg < args_.size() && args_[arg].first_slot + elem < args_[arg].end_slot, name(), ": argument ",
              arg, " (element ", elem, ") of ", op_.name(), " is not a tensor");
  return args_[arg].first_slot + elem;
}

bool FormulaNode::needs_grad(size_t arg, size_t elem) const { return next_.at(slot(arg, elem)).valid(); }

const TensorMeta& FormulaNode::result_meta(size_t i) const {
  if (result_metas_.empty()) {
    for (const InputMeta& m : input_meta()) {
      TensorMeta& r = result_metas_.emplace_back();
      r.sizes = m.sizes;
      r.dtype = m.dtype;
      r.device = m.device;
      r.defined = true;
    }
  }
  return result_metas_.at(i);
}

// ---- views and in-place ----

namespace {

// A contiguous tensor shaped like `base` holding `grad`, and a view of it
// with the view's geometry: the view's position inside `base` is the same as
// its position inside a contiguous copy only when `base` is contiguous, so a
// non-contiguous base goes through a buffer with the base's own layout.
struct BaseBuffer {
  Tensor buffer;  // base's layout
  Tensor region;  // the view's elements inside buffer
};

BaseBuffer base_buffer(const Tensor& grad, const TensorMeta& base, IntArrayRef view_sizes, IntArrayRef view_strides,
                       int64_t view_offset) {
  BaseBuffer b;
  if (grad.is_contiguous() && base.strides == DimVector(grad.strides())) {
    b.buffer = grad.clone();
  } else {
    b.buffer = empty_strided(base.sizes, base.strides, TensorOptions(grad.dtype()).device(grad.device()));
    b.buffer.copy_(grad);
  }
  // Geometries are absolute in the storage; the buffer's element 0 is the base's.
  b.region = b.buffer.as_strided(view_sizes, view_strides, b.buffer.storage_offset() + view_offset - base.storage_offset);
  return b;
}

}  // namespace

CopySlices::CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn, Edge base_edge)
    : base_(meta_of(base)),
      view_sizes_(view.sizes()),
      view_strides_(view.strides()),
      view_offset_(view.storage_offset()),
      fn_(std::move(fn)) {
  add_input_meta(base);
  next_.push_back(std::move(base_edge));
  const auto& fn_next = fn_->next_functions();
  for (size_t i = 1; i < fn_next.size(); ++i) next_.push_back(fn_next[i]);
}

TensorList CopySlices::apply(TensorList&& grads) {
  const Tensor& grad = grads.at(0);
  if (!grad.defined()) return TensorList(next_.size());  // e.g. the base was overwritten later
  BaseBuffer b = base_buffer(grad, base_, view_sizes_, view_strides_, view_offset_);
  TensorList fn_grads = fn_->apply({b.region.clone()});
  TensorList out(next_.size());
  if (fn_grads.at(0).defined()) b.region.copy_(fn_grads[0]);
  else b.region.zero_();
  out[0] = b.buffer.is_contiguous() ? b.buffer : b.buffer.contiguous();
  for (size_t i = 1; i < out.size() && i < fn_grads.size(); ++i) out[i] = std::move(fn_grads[i]);
  return out;
}

ViewOfBase::ViewOfBase(const Tensor& base, const Tensor& view)
    : base_(meta_of(base)),
      view_sizes_(view.sizes()),
      view_strides_(view.strides()),
      view_offset_(view.storage_offset()) {}

TensorList ViewOfBase::apply(TensorList&& grads) {
  if (!grads.at(0).defined()) return {Tensor()};
  return {as_strided_backward(grads.at(0), base_, view_sizes_, view_strides_, view_offset_)};
}

}  // namespace ember::autograd
