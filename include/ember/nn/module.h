// ember::nn::Module: the base of every layer, as in libtorch's C++ frontend.
//
//   struct NetImpl : ember::nn::Module {
//     NetImpl() {
//       fc1 = register_module("fc1", ember::nn::Linear(784, 64));
//       fc2 = register_module("fc2", ember::nn::Linear(64, 10));
//     }
//     ember::Tensor forward(const ember::Tensor& x) { return fc2(fc1(x).relu()); }
//     ember::nn::Linear fc1{nullptr}, fc2{nullptr};
//   };
//   EMBER_MODULE(Net);            // Net holds a std::shared_ptr<NetImpl>
//
//   Net net;                      // constructs a NetImpl; net->name() is "Net"
//   ember::Tensor logits = net(x);                  // calls forward
//   auto sd = net->state_dict();  // {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
//   for (const auto& p : net->named_parameters()) std::cout << p.key() << " " << p.value().sizes() << "\n";
//
// Note [Parameter slots]
// A module keeps each registered parameter and buffer in a slot whose address
// never changes, and register_parameter/register_buffer return a reference to
// it. Layers keep that reference as their member (`Tensor& weight;`), so the
// member and the registry are one object: assigning `linear->weight = t`
// replaces the registered tensor too.
// `to(dtype)` / `to(device)` keep every tensor's identity, as libtorch's do:
// each converted parameter and buffer keeps its TensorImpl, whose data is
// swapped for the converted copy (Tensor::set_data). So an optimiser created
// before `to()` holds the same tensors, sees the converted data, and converts
// its own state (exp_avg, ...) to match at its next step (optim/optimizer.cpp).
// load_state_dict(), zero_grad() and nn::init work in place too.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/error.h"
#include "ember/serialize.h"
#include "ember/tensor.h"

namespace ember::nn {

class Module;
template <class Impl> class ModuleHolder;

// One entry of named_parameters(), named_children(), ...: libtorch's
// `item.key()` / `item.value()`, a pair's `.first` / `.second`, and
// `auto& [name, value] = item` all work.
template <class Value>
struct NamedItem {
  std::string first;
  Value second;

  const std::string& key() const { return first; }
  Value& value() { return second; }
  const Value& value() const { return second; }
};

// Names and tensors in registration order (a module's own first, then each
// child's, depth first), named with dotted paths: "features.0.weight".
using NamedTensors = std::vector<NamedItem<Tensor>>;
using NamedModules = std::vector<NamedItem<std::shared_ptr<Module>>>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  // The name is the type name shown when printing and in errors ("Linear",
  // "Sequential"). Without one it is the class's own name, without its
  // namespace and a trailing "Impl": `struct NetImpl : Module` is "Net".
  Module() = default;
  explicit Module(std::string name);
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  std::string name() const;
  // This module's one-line description, without its children, e.g.
  // "Linear(in_features=784, out_features=10, bias=true)". The default prints
  // the name and "()".
  virtual void pretty_print(std::ostream& os) const;

  // ---- registration (names: non-empty, no '.', unique within the module) ----
  // `tensor` becomes a leaf (detached if it has history) that requires grad
  // when `requires_grad`. An undefined tensor registers an absent parameter
  // (like PyTorch's `bias=None`): it is skipped by parameters() and state_dict().
  // The reference stays valid for the module's life (Note [Parameter slots]).
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // A tensor that is state but not trained (running_mean). Undefined allowed, skipped.
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "register_module: M must derive from ember::nn::Module");
    add_child(std::move(name), module);
    return module;
  }
  template <class M>
  std::shared_ptr<M> register_module(std::string name, ModuleHolder<M> holder) {
    return register_module(std::move(name), holder.ptr());
  }
  // Replaces the registered child `name` (same name, same position).
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }

  // ---- traversal (registration order) ----
  TensorList parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  TensorList buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  NamedModules named_children() const;
  // This module (named "") and every descendant, depth first, parents before
  // children. The module must be owned by a shared_ptr (holders are).
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  NamedModules named_modules(bool include_self = true);
  // Calls fn on every descendant, then on this module (PyTorch's order).
  void apply(const std::function<void(Module&)>& fn);

  // ---- modes ----
  // Sets training mode here and in every descendant.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // ---- dtype and device ----
  // Converts floating-point parameters and buffers (and their grads); integer
  // ones (num_batches_tracked) keep their dtype. Each tensor keeps its
  // identity and only its data changes (Note [Parameter slots]).
  void to(DType dtype);
  // Moves every parameter, buffer and grad.
  void to(Device device);
  void to(Device device, DType dtype);

  // Clears the grads of all parameters: set to undefined (the default, as
  // PyTorch 2.x; libtorch 1.13 defaulted to false), or filled with zeros.
  void zero_grad(bool set_to_none = true);

  // ---- state ----
  // Parameters and buffers by their dotted names, sharing memory with the
  // module (as PyTorch's state_dict; clone to snapshot).
  TensorDict state_dict() const;
  // Copies `state` into the existing tensors (no grad recorded, identities
  // kept), converting dtypes. Errors (ember::Error, naming the keys): a shape
  // mismatch; with `strict`, keys the module lacks or does not find.
  void load_state_dict(const TensorDict& state, bool strict = true);

 private:
  struct Slot {
    std::string name;
    Tensor tensor;
  };
  void check_new_name(const std::string& name, const char* what) const;
  void add_child(std::string name, std::shared_ptr<Module> child);
  void replace_child(const std::string& name, std::shared_ptr<Module> child);
  void collect(NamedTensors& out, const std::string& prefix, bool params, bool recurse) const;
  void collect_modules(NamedModules& out, const std::string& prefix);
  // Applies fn to every slot (parameters and buffers) of this module and its descendants.
  void for_each_slot(const std::function<void(Slot&, bool is_parameter)>& fn);

  std::string name_;  // empty: the class's own name
  bool training_ = true;
  std::deque<Slot> parameters_;  // a deque: slot addresses never change
  std::deque<Slot> buffers_;
  NamedModules children_;
};

// Prints the module tree as PyTorch does:
//   Sequential(
//     (0): Linear(in_features=784, out_features=128, bias=true)
//     (1): ReLU()
//   )
std::ostream& operator<<(std::ostream& os, const Module& module);

// ---- holders ----
// ModuleHolder<Impl> is a shared_ptr<Impl> with the module's ergonomics
// (libtorch's TORCH_MODULE): `Linear fc(784, 10)` constructs a LinearImpl,
// `fc->weight` reaches the module, `fc(x)` calls forward, `Linear fc{nullptr}`
// is empty until assigned. Copies share the module.
template <class Impl>
class ModuleHolder {
 public:
  using ImplType = Impl;

  // Default-constructs the module, when Impl allows it.
  ModuleHolder()
    requires std::is_default_constructible_v<Impl>
      : impl_(std::make_shared<Impl>()) {}
  ModuleHolder(std::nullptr_t) {}  // NOLINT: `Linear fc = nullptr`
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT: from register_module
  // Forwards the arguments to Impl's constructor: Linear(784, 10),
  // Sequential(Sequential(...), ReLU()). A single holder, nullptr or
  // shared_ptr<Impl> argument means the constructors above instead.
  template <class First, class... Rest>
    requires(std::is_constructible_v<Impl, First, Rest...> &&
             !(sizeof...(Rest) == 0 && (std::is_base_of_v<ModuleHolder, std::decay_t<First>> ||
                                        std::is_same_v<std::decay_t<First>, std::nullptr_t> ||
                                        std::is_same_v<std::decay_t<First>, std::shared_ptr<Impl>>)))
  explicit ModuleHolder(First&& first, Rest&&... rest)
      : impl_(std::make_shared<Impl>(std::forward<First>(first), std::forward<Rest>(rest)...)) {}

  Impl* operator->() const { return &get_checked(); }
  Impl& operator*() const { return get_checked(); }
  Impl* get() const { return static_cast<Impl*>(impl_.get()); }
  std::shared_ptr<Impl> ptr() const { return std::static_pointer_cast<Impl>(impl_); }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get_checked().forward(std::forward<Args>(args)...);
  }

 private:
  Impl& get_checked() const {
    EMBER_CHECK(impl_ != nullptr, "ModuleHolder: the module is empty (constructed from nullptr and never assigned)");
    return *get();
  }
  // Held as the base type, and cast back by get() and ptr(): a
  // shared_ptr<Impl> member would instantiate shared_ptr once per layer type
  // in every program that includes the layers (a large share of the compile
  // time of <ember/ember.h>).
  std::shared_ptr<Module> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& holder) {
  return os << *holder;
}

}  // namespace ember::nn

// Defines `Name` as the holder of `NameImpl`.
#define EMBER_MODULE(Name)                                    \
  class Name : public ::ember::nn::ModuleHolder<Name##Impl> { \
   public:                                                    \
    using ::ember::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }
