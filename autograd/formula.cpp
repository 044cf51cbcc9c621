#include "autograd/formula.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/op_decls.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

struct Registry {
  std::unordered_map<const OpEntry*, Formula> formulas;
  std::unordered_set<const OpEntry*> non_differentiable;
  std::unordered_map<const OpEntry*, OpAutogradInfo> info;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_formula(const OpEntry& op, Formula f) {
  EMBER_CHECK(f.backward != nullptr, "register_formula(", op.name(), "): no backward function");
  const bool added = registry().formulas.emplace(&op, std::move(f)).second;
  EMBER_CHECK(added, "register_formula(", op.name(), "): the op already has a derivative formula");
}

void register_non_differentiable(const OpEntry& op) { registry().non_differentiable.insert(&op); }

const Formula* find_formula(const OpEntry& op) {
  auto it = registry().formulas.find(&op);
  return it == registry().formulas.end() ? nullptr : &it->second;
}

bool is_non_differentiable(const OpEntry& op) { return registry().non_differentiable.count(&op) != 0; }

void build_op_autograd_info() {
  // An in-place op `name_` without its own formula uses the one of `name`
  // (Note [Writing a derivative formula]); resolved once, here, so a call
  // costs one lookup.
  Registry& r = registry();
  for (const OpEntry* op : Dispatcher::instance().ops()) {
    const std::string& name = op->name();
    if (name.size() < 2 || name.back() != '_' || r.formulas.count(op) || r.non_differentiable.count(op)) continue;
    const OpEntry* functional = Dispatcher::instance().find(std::string_view(name).substr(0, name.size() - 1));
    if (!functional) continue;
    if (auto it = r.formulas.find(functional); it != r.formulas.end()) r.formulas.emplace(op, it->second);
    else if (r.non_differentiable.count(functional)) r.non_differentiable.insert(op);
  }
  for (const OpEntry* op : Dispatcher::instance().ops()) {
    OpAutogradInfo& i = r.info[op];
    i.formula = find_formula(*op);
    i.non_differentiable = r.non_differentiable.count(op) != 0;
    const OpSchema& s = op->schema();
    i.in_place = !s.args.empty() && s.args[0].type.find("(a!)") != std::string::npos;
    i.view = !s.returns.empty() && s.returns[0].find("(a)") != std::string::npos;
  }
}

const OpAutogradInfo& op_autograd_info(const OpEntry& op) {
  static const OpAutogradInfo none;
  const auto& info = registry().info;
  auto it = info.find(&op);
  return it == info.end() ? none : it->second;
}

// ---- GradContext accessors for non-tensor arguments ----

Scalar GradContext::scalar(size_t arg) const { return std::get<Scalar>(value(arg).payload()); }

std::optional<Scalar> GradContext::opt_scalar(size_t arg) const {
  const IValue& v = value(arg);
  if (v.is_none()) return std::nullopt;
  return std::get<Scalar>(v.payload());
}

int64_t GradContext::int_arg(size_t arg) const { return std::get<int64_t>(value(arg).payload()); }

std::optional<int64_t> GradContext::opt_int(size_t arg) const {
  const IValue& v = value(arg);
  if (v.is_none()) return std::nullopt;
  return std::get<int64_t>(v.payload());
}

std::vector<int64_t> GradContext::ints(size_t arg) const { return std::get<std::vector<int64_t>>(value(arg).payload()); }

bool GradContext::flag(size_t arg) const { return std::get<bool>(value(arg).payload()); }

double GradContext::real(size_t arg) const { return std::get<double>(value(arg).payload()); }

std::string_view GradContext::str(size_t arg) const { return std::get<std::string>(value(arg).payload()); }

std::optional<DType> GradContext::opt_dtype(size_t arg) const {
  const IValue& v = value(arg);
  if (v.is_none()) return std::nullopt;
  return std::get<DType>(v.payload());
}

// ---- helpers ----

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  EMBER_CHECK(lead >= 0, "sum_to: gradient of shape ", grad.sizes(), " cannot be reduced to shape ", sizes);
  DimVector dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t g = grad.sizes()[lead + static_cast<int64_t>(i)];
    if (sizes[i] == 1 && g != 1) dims.push_back(lead + static_cast<int64_t>(i));
    else EMBER_CHECK(sizes[i] == g, "sum_to: gradient of shape ", grad.sizes(), " cannot be reduced to shape ", sizes);
  }
  Tensor r = dims.empty() ? grad : grad.sum(dims, true);
  return r.sizes() == sizes ? r : r.reshape(sizes);
}

Tensor reduce_to(const Tensor& grad, const TensorMeta& input) {
  if (!grad.defined()) return grad;
  Tensor g = sum_to(grad, input.sizes);
  if (g.dtype() != input.dtype || g.device() != input.device) g = g.to(input.device, input.dtype);
  return g;
}

Tensor unsqueeze_reduced(const Tensor& t, IntArrayRef input_sizes, IntArrayRef dims, bool keepdim) {
  if (keepdim || input_sizes.empty()) return t;
  const int64_t n = static_cast<int64_t>(input_sizes.size());
  DimVector shape(input_sizes);
  if (dims.empty()) {
    for (int64_t& s : shape) s = 1;
  } else {
    for (int64_t d : dims) shape[d < 0 ? d + n : d] = 1;
  }
  return t.reshape(shape);
}

Tensor as_strided_backward(const Tensor& grad, const TensorMeta& input, IntArrayRef view_sizes,
                           IntArrayRef view_strides, int64_t view_offset) {
  // Works in "storage space": the span of storage both geometries touch.
  auto extent = [](IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
    int64_t hi = offset;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == 0) return offset;
      hi += (sizes[i] - 1) * strides[i];
    }
    return hi + 1;
  };
  const int64_t lo = std::min(input.storage_offset, view_offset);
  const int64_t hi = std::max(extent(input.sizes, input.strides, input.storage_offset),
                              extent(view_sizes, view_strides, view_offset));
  const Tensor positions = arange(hi - lo, kInt64);
  const TensorOptions opts = TensorOptions(grad.dtype()).device(grad.device());
  Tensor storage = zeros({hi - lo}, opts);
  // Overlapping view elements share a storage slot: their gradients add up.
  const Tensor at_view = positions.as_strided(view_sizes, view_strides, view_offset - lo).reshape({-1});
  storage = op::index_put_.call(storage, TensorList{at_view.to(grad.device())}, grad.reshape({-1}), true);
  const Tensor at_input = positions.as_strided(input.sizes, input.strides, input.storage_offset - lo);
  return op::index.call(storage, TensorList{at_input.to(grad.device())});
}

}  // namespace ember::autograd
