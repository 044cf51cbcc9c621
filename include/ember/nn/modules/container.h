// ember::nn containers, as torch.nn: Sequential, ModuleList, ModuleDict.
//
//   namespace nn = ember::nn;
//   nn::Sequential mlp(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
//   ember::Tensor logits = mlp(x);                  // each module's forward in turn
//   mlp->push_back(nn::LogSoftmax(1));              // named "3"
//   nn::LinearImpl& first = mlp->at<nn::LinearImpl>(0);
//
//   nn::ModuleList blocks;                          // holds modules; no forward
//   for (int i = 0; i < 4; ++i) blocks->push_back(nn::Linear(64, 64));
//   for (const auto& block : *blocks) { ... }       // std::shared_ptr<Module>
//
// Children are registered with the container, so their parameters appear in
// state_dict() as "0.weight", "1.bias", ... (or "<key>.weight" in a ModuleDict).
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

// A module Sequential can chain: forward(const Tensor&) returns a Tensor.
template <class M>
concept TensorModule = std::is_base_of_v<Module, M> && requires(M& module, const Tensor& x) {
  { module.forward(x) } -> std::convertible_to<Tensor>;
};

namespace detail {
// The module in a holder or shared_ptr, as a shared_ptr (for the containers).
template <class M> std::shared_ptr<M> as_shared(std::shared_ptr<M> module) { return module; }
template <class M> std::shared_ptr<M> as_shared(const ModuleHolder<M>& holder) { return holder.ptr(); }
template <class T> using shared_type = decltype(as_shared(std::declval<T>()));
template <class T> using module_type = typename shared_type<T>::element_type;

// `Derived&` as the module type the caller asked for, or an ember::Error
// naming the container, the position and the type it really is.
template <class M>
M& checked_cast(const std::shared_ptr<Module>& module, const std::string& container, const std::string& key) {
  M* cast = dynamic_cast<M*>(module.get());
  EMBER_CHECK(cast != nullptr, container, ": the module at ", key, " is a ", module->name(),
              ", not the requested type");
  return *cast;
}
}  // namespace detail

// Calls its modules in order, each on the previous one's output.
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Ms>
    requires(sizeof...(Ms) > 0 && (TensorModule<detail::module_type<Ms>> && ...))
  explicit SequentialImpl(Ms&&... modules) : SequentialImpl() {
    (push_back(std::forward<Ms>(modules)), ...);
  }

  // Appends under the next index as name ("0", "1", ...), or under `name`.
  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(modules_.size()), std::forward<M>(module));
  }
  template <class M>
  void push_back(std::string name, M&& module) {
    auto shared = detail::as_shared(std::forward<M>(module));
    static_assert(TensorModule<typename decltype(shared)::element_type>,
                  "Sequential: a module's forward must take a Tensor and return a Tensor");
    register_module(std::move(name), shared);
    forwards_.emplace_back([raw = shared.get()](const Tensor& x) -> Tensor { return raw->forward(x); });
    modules_.push_back(std::move(shared));
  }

  // The input through every module in turn (the input itself when empty).
  Tensor forward(const Tensor& input);

  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  const std::shared_ptr<Module>& operator[](size_t index) const;
  // The module at `index` as its concrete type: seq->at<LinearImpl>(0).
  template <class M>
  M& at(size_t index) const {
    return detail::checked_cast<M>((*this)[index], "Sequential", std::to_string(index));
  }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

 private:
  // Each module's forward, bound when it was added (the modules are
  // type-erased; the container keeps them alive through modules_).
  std::vector<std::function<Tensor(const Tensor&)>> forwards_;
  std::vector<std::shared_ptr<Module>> modules_;
};
EMBER_MODULE(Sequential);

// An indexed list of modules, named "0", "1", ...; it has no forward.
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <class... Ms>
    requires(sizeof...(Ms) > 0 && (std::is_base_of_v<Module, detail::module_type<Ms>> && ...))
  explicit ModuleListImpl(Ms&&... modules) : ModuleListImpl() {
    (push_back(std::forward<Ms>(modules)), ...);
  }

  template <class M>
  void push_back(M&& module) {
    std::shared_ptr<Module> shared = detail::as_shared(std::forward<M>(module));
    register_module(std::to_string(modules_.size()), shared);
    modules_.push_back(std::move(shared));
  }

  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  const std::shared_ptr<Module>& operator[](size_t index) const;
  template <class M>
  M& at(size_t index) const {
    return detail::checked_cast<M>((*this)[index], "ModuleList", std::to_string(index));
  }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
EMBER_MODULE(ModuleList);

// Modules by string key, in insertion order; it has no forward.
class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("ModuleDict") {}

  // Adds `module` under `key` (a new key: no '.', not empty).
  template <class M>
  void insert(std::string key, M&& module) {
    std::shared_ptr<Module> shared = detail::as_shared(std::forward<M>(module));
    register_module(key, shared);
    items_.emplace_back(std::move(key), std::move(shared));
  }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const;
  // The module under `key`; an unknown key is an ember::Error listing the keys.
  const std::shared_ptr<Module>& operator[](const std::string& key) const;
  template <class M>
  M& at(const std::string& key) const {
    return detail::checked_cast<M>((*this)[key], "ModuleDict", "'" + key + "'");
  }
  using Item = std::pair<std::string, std::shared_ptr<Module>>;
  std::vector<Item>::const_iterator begin() const { return items_.begin(); }
  std::vector<Item>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
};
EMBER_MODULE(ModuleDict);

}  // namespace ember::nn
