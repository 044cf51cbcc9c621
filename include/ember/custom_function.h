// Custom autograd Functions: an op whose forward and backward you write.
//
//   struct Cube : ember::autograd::Function<Cube> {
//     static Tensor forward(AutogradContext& ctx, const Tensor& x) {
//       ctx.save_for_backward({x});
//       return x * x * x;
//     }
//     static tensor_list backward(AutogradContext& ctx, tensor_list grad_outputs) {
//       Tensor x = ctx.get_saved_variables()[0];
//       return {grad_outputs[0] * 3 * x * x};
//     }
//   };
//   Tensor y = Cube::apply(x);   // y.grad_fn()->name() == "CubeBackward"
//
// Note [How a custom Function records]
// apply() gives each argument of forward a gradient slot, in order; each
// element of a TensorList argument takes a slot of its own. It takes the
// edges of the tensor arguments that require grad, runs forward with grad
// mode off (so forward records nothing), and makes one node, named after the
// type ("Cube" -> "CubeBackward"; a `static constexpr const char* name`
// member overrides the type's name), that becomes the grad_fn of the
// outputs. In backward the node calls T::backward with one gradient per
// output and expects one gradient per slot back: undefined for non-tensor
// arguments and for inputs that need none, else shaped like the input.
// Tensors given to save_for_backward keep the version they had when forward
// returned; if one is modified in place later, backward fails. An output
// that forward saved is kept without its history, so the node does not own
// its own output.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <variant>

#include "ember/autograd.h"
#include "ember/tensor.h"

namespace ember::autograd {

using tensor_list = TensorList;

// A value kept in AutogradContext::saved_data, read back with std::get.
using SavedValue = std::variant<std::monostate, Tensor, Scalar, int64_t, double, bool, std::string>;

class CustomFunctionNode;
namespace detail {
class CustomCall;
}

// What forward leaves for backward.
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // forward: tensors backward will read (inputs or outputs).
  void save_for_backward(tensor_list to_save);
  // backward: the saved tensors, in order. Fails, naming the function and
  // the versions, if one was modified in place after it was saved.
  tensor_list get_saved_variables() const;
  // forward: inputs that forward modified in place. Each must also be
  // returned as an output; it then gets this function as its history.
  void mark_dirty(const tensor_list& inputs);
  // forward: outputs with no gradient (indices, masks). They do not require
  // grad; backward receives zeros for them (see set_materialize_grads).
  void mark_non_differentiable(const tensor_list& outputs);
  // Whether backward gets zeros (the default) or undefined tensors for
  // outputs whose gradient was never computed.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether slot `i` (see the Note above) needs a gradient.
  bool needs_input_grad(size_t i) const;

  // Anything else backward needs: k, shapes, flags. Tensors belong in
  // save_for_backward (version-checked; a saved output makes no cycle).
  std::unordered_map<std::string, SavedValue> saved_data;

 private:
  friend class CustomFunctionNode;
  friend class detail::CustomCall;
  const CustomFunctionNode* node_ = nullptr;  // the node that owns this context
  // Set during forward; apply() consumes them.
  tensor_list to_save_, dirty_, non_differentiable_;
  bool materialize_grads_ = true;
};

namespace detail {

using BackwardFn = TensorList (*)(AutogradContext&, TensorList);

// The part of Function<T>::apply that does not depend on T.
class CustomCall {
 public:
  CustomCall(const std::string& function_name, BackwardFn backward);
  ~CustomCall();
  CustomCall(const CustomCall&) = delete;
  CustomCall& operator=(const CustomCall&) = delete;

  void add_argument(const Tensor& t);
  void add_argument(const TensorList& list);
  template <class A>
  void add_argument(const A&) {
    add_non_tensor_argument();
  }
  // After the arguments: takes their edges (if anything will be recorded)
  // and returns the context forward gets.
  AutogradContext& start();
  // Connects forward's outputs to the node and saves what forward asked for.
  Tensor finish(Tensor output);
  TensorList finish(TensorList outputs);

 private:
  void add_non_tensor_argument();

  std::shared_ptr<CustomFunctionNode> node_;
  std::string function_name_;
  TensorList inputs_;  // one per slot; undefined for non-tensor slots
};

// "(anonymous namespace)::Cube" -> "Cube", from the demangled type name.
std::string type_name(const std::type_info& type);

template <class T>
const std::string& function_name() {
  static const std::string name = [] {
    if constexpr (requires { T::name; }) return std::string(T::name);
    else return type_name(typeid(T));
  }();
  return name;
}

template <class T>
TensorList call_backward(AutogradContext& ctx, TensorList grad_outputs) {
  return T::backward(ctx, std::move(grad_outputs));
}

}  // namespace detail

template <class T>
struct Function {
  // Runs T::forward on `args` and records T::backward as its derivative.
  // Returns what forward returns (a Tensor or a tensor_list).
  template <class... Args>
  static auto apply(Args&&... args) {
    detail::CustomCall call(detail::function_name<T>(), &detail::call_backward<T>);
    (call.add_argument(args), ...);
    AutogradContext& ctx = call.start();
    auto outputs = [&] {
      NoGradGuard no_grad;
      return T::forward(ctx, std::forward<Args>(args)...);
    }();
    return call.finish(std::move(outputs));
  }
};

}  // namespace ember::autograd
