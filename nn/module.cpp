// nn::Module: registration, traversal, train/eval, to(), zero_grad.
// state_dict lives in module_state.cpp, printing in module_print.cpp.
#include "ember/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string_view>
#include <typeinfo>

#include "ember/autograd.h"

namespace ember::nn {

namespace {

// "ns::NetImpl" -> "Net": the demangled class name without its namespaces
// (those outside template arguments) and a trailing "Impl".
std::string type_name(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                                         std::free);
  std::string name = status == 0 && demangled ? demangled.get() : type.name();
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (depth == 0 && name.compare(i, 2, "::") == 0) start = i + 2;
  }
  name = name.substr(start);
  constexpr std::string_view kImpl = "Impl";
  if (name.size() > kImpl.size() && name.ends_with(kImpl)) name.resize(name.size() - kImpl.size());
  return name;
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}

// Computed on each call rather than cached: during a derived constructor
// typeid(*this) is still the class under construction.
std::string Module::name() const { return name_.empty() ? type_name(typeid(*this)) : name_; }

void Module::pretty_print(std::ostream& os) const { os << name() << "()"; }

void Module::check_new_name(const std::string& name, const char* what) const {
  EMBER_CHECK(!name.empty(), this->name(), "::", what, ": the name is empty");
  EMBER_CHECK(name.find('.') == std::string::npos, this->name(), "::", what, ": name '", name,
              "' contains '.', which separates the parts of a state_dict key");
  const auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& entry) {
      if constexpr (std::is_same_v<std::decay_t<decltype(entry)>, Slot>) return entry.name == name;
      else return entry.first == name;
    });
  };
  EMBER_CHECK(!taken(parameters_) && !taken(buffers_) && !taken(children_), this->name(), "::", what, ": name '", name,
              "' is already registered in this module");
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "register_parameter");
  if (tensor.defined()) {
    // A parameter is a leaf, as nn.Parameter(t) is.
    if (tensor.grad_fn()) tensor = tensor.detach();
    tensor.requires_grad_(requires_grad);
  }
  parameters_.push_back(Slot{std::move(name), std::move(tensor)});
  return parameters_.back().tensor;
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_new_name(name, "register_buffer");
  buffers_.push_back(Slot{std::move(name), std::move(tensor)});
  return buffers_.back().tensor;
}

void Module::add_child(std::string name, std::shared_ptr<Module> child) {
  check_new_name(name, "register_module");
  EMBER_CHECK(child != nullptr, this->name(), "::register_module: module '", name, "' is empty (nullptr)");
  children_.push_back({std::move(name), std::move(child)});
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> child) {
  EMBER_CHECK(child != nullptr, this->name(), "::replace_module: module '", name, "' is empty (nullptr)");
  for (auto& [child_name, current] : children_) {
    if (child_name == name) {
      current = std::move(child);
      return;
    }
  }
  EMBER_FAIL(this->name(), "::replace_module: no child named '", name, "'");
}

// ---- traversal ----

void Module::collect(NamedTensors& out, const std::string& prefix, bool params, bool recurse) const {
  for (const Slot& slot : params ? parameters_ : buffers_) {
    if (slot.tensor.defined()) out.push_back({prefix + slot.name, slot.tensor});
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->collect(out, prefix + name + ".", params, true);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect(out, "", /*params=*/true, recurse);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect(out, "", /*params=*/false, recurse);
  return out;
}

namespace {
TensorList values_of(const NamedTensors& named) {
  TensorList out;
  out.reserve(named.size());
  for (const auto& entry : named) out.push_back(entry.second);
  return out;
}
}  // namespace

TensorList Module::parameters(bool recurse) const { return values_of(named_parameters(recurse)); }
TensorList Module::buffers(bool recurse) const { return values_of(named_buffers(recurse)); }

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& entry : children_) out.push_back(entry.second);
  return out;
}

NamedModules Module::named_children() const { return children_; }

void Module::collect_modules(NamedModules& out, const std::string& prefix) {
  for (const auto& [name, child] : children_) {
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    out.push_back({path, child});
    child->collect_modules(out, path);
  }
}

NamedModules Module::named_modules(bool include_self) {
  NamedModules out;
  if (include_self) {
    std::shared_ptr<Module> self = weak_from_this().lock();
    EMBER_CHECK(self != nullptr, this->name(),
                "::named_modules: the module is not owned by a shared_ptr; create it through its holder "
                "(e.g. Linear(...)) or std::make_shared, or pass include_self=false");
    out.push_back({"", std::move(self)});
  }
  collect_modules(out, "");
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& entry : named_modules(include_self)) out.push_back(std::move(entry.second));
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& entry : children_) entry.second->apply(fn);
  fn(*this);
}

// ---- modes, dtype, device, grads ----

void Module::train(bool on) {
  training_ = on;
  for (const auto& entry : children_) entry.second->train(on);
}

void Module::for_each_slot(const std::function<void(Slot&, bool is_parameter)>& fn) {
  for (Slot& slot : parameters_) fn(slot, true);
  for (Slot& slot : buffers_) fn(slot, false);
  for (const auto& entry : children_) entry.second->for_each_slot(fn);
}

namespace {
// Swaps `t`'s data for its conversion, keeping the tensor itself (and so
// every handle to it, an optimiser's included) and its requires_grad; the
// grad is converted too.
void convert_in_place(const Tensor& t, const std::function<Tensor(const Tensor&)>& convert) {
  NoGradGuard no_grad;
  const Tensor grad = t.grad();
  t.set_data(convert(t.detach()));
  if (grad.defined()) t.set_grad(convert(grad.detach()));
}
}  // namespace

void Module::to(DType dtype) {
  EMBER_CHECK(is_floating_point(dtype), name(), "::to: modules convert to floating-point dtypes only, got ", dtype);
  for_each_slot([&](Slot& slot, bool) {
    if (!slot.tensor.defined() || !slot.tensor.is_floating_point() || slot.tensor.dtype() == dtype) return;
    convert_in_place(slot.tensor, [&](const Tensor& t) { return t.to(dtype); });
  });
}

void Module::to(Device device) {
  for_each_slot([&](Slot& slot, bool) {
    if (!slot.tensor.defined() || slot.tensor.device() == device) return;
    convert_in_place(slot.tensor, [&](const Tensor& t) { return t.to(device); });
  });
}

void Module::to(Device device, DType dtype) {
  to(device);
  to(dtype);
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for_each_slot([&](Slot& slot, bool is_parameter) {
    if (!is_parameter || !slot.tensor.defined()) return;
    Tensor grad = slot.tensor.grad();
    if (!grad.defined()) return;
    if (set_to_none) {
      slot.tensor.set_grad(Tensor());
    } else {
      // A grad made with create_graph has history; the zeros must not.
      if (grad.grad_fn()) {
        grad = grad.detach();
        slot.tensor.set_grad(grad);
      }
      grad.zero_();
    }
  });
}

}  // namespace ember::nn
