// Derivative formulas: one per differentiable op, registered by op.
//
// Note [Writing a derivative formula]
// The autograd kernel (autograd/autograd_kernel.cpp) handles every op the
// same way. It runs the op below autograd, and if an input requires grad it
// makes a FormulaNode that keeps:
//   - every non-tensor argument (Scalars, ints, strings: cheap);
//   - the tensor arguments listed in Formula::save, and the op's results when
//     Formula::save_result is set, each with its version (a tensor modified in
//     place after it was saved makes backward fail with a clear error);
//   - the shape, dtype and device of every tensor argument (TensorMeta),
//     whether saved or not.
// In backward, the node calls the formula with a GradContext and one gradient
// per result of the op (results of an integer or bool dtype get an undefined
// gradient; a floating result nobody used gets zeros). The formula returns
// one gradient per input *slot*: tensor arguments in schema order, a Tensor[]
// argument taking one slot per element (GradContext::slot maps them). Each
// gradient must have the input's shape and dtype: `reduce_to` does the
// un-broadcasting and the cast. Return an undefined Tensor where there is no
// gradient, and skip the work where `needs_grad` is false.
//
// Formulas are written with ember ops only, so with create_graph the
// backward records a graph of its own and second derivatives work.
//
// An in-place op `name_` with no formula of its own uses the formula of
// `name`; the autograd kernel saves a copy of `self` taken before the op
// when that formula reads `self`.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/dispatcher.h"
#include "core/ivalue.h"
#include "ember/autograd.h"
#include "ember/tensor.h"

namespace ember::autograd {

// What a node remembers of a tensor argument it does not save.
struct TensorMeta {
  DimVector sizes;
  DimVector strides;           // the input's layout, for view formulas (as_strided)
  int64_t storage_offset = 0;
  DType dtype = DType::Float32;
  Device device;
  bool defined = false;
  bool requires_grad = false;  // at the time of the forward call
};

class GradContext {
 public:
  virtual ~GradContext() = default;
  // Arguments by schema position (0 = first argument).
  // A saved tensor argument (listed in Formula::save); fails if not saved or
  // if it was modified in place since.
  virtual Tensor saved(size_t arg) const = 0;
  // A saved Tensor[] or Tensor?[] argument.
  virtual TensorList saved_list(size_t arg) const = 0;
  // The op's i-th result (needs Formula::save_result).
  virtual Tensor result(size_t i = 0) const = 0;
  // A non-tensor argument, as the forward call received it.
  virtual const IValue& value(size_t arg) const = 0;
  Scalar scalar(size_t arg) const;
  std::optional<Scalar> opt_scalar(size_t arg) const;
  int64_t int_arg(size_t arg) const;
  std::optional<int64_t> opt_int(size_t arg) const;
  std::vector<int64_t> ints(size_t arg) const;
  bool flag(size_t arg) const;
  double real(size_t arg) const;
  std::string_view str(size_t arg) const;
  std::optional<DType> opt_dtype(size_t arg) const;

  // Shape/dtype/device of tensor argument `arg` (element `elem` of a list).
  virtual const TensorMeta& meta(size_t arg, size_t elem = 0) const = 0;
  virtual size_t list_size(size_t arg) const = 0;
  // Slot index of a tensor argument (or of element `elem` of a list argument).
  virtual size_t slot(size_t arg, size_t elem = 0) const = 0;
  virtual size_t num_slots() const = 0;
  // Whether the gradient for this input is wanted.
  virtual bool needs_grad(size_t arg, size_t elem = 0) const = 0;
  // Shape/dtype of the i-th result.
  virtual const TensorMeta& result_meta(size_t i = 0) const = 0;
};

// grads: one per result of the op. Returns one gradient per input slot.
using BackwardFormula = TensorList (*)(const GradContext& ctx, const TensorList& grads);

struct Formula {
  std::vector<int> save;     // schema positions of the tensor arguments the formula reads
  bool save_result = false;  // the formula reads the op's results
  BackwardFormula backward = nullptr;
};

// Registers the derivative of `op` (once per op).
void register_formula(const OpEntry& op, Formula f);
// An op whose results never require grad (comparisons, argmax, isnan, ...).
void register_non_differentiable(const OpEntry& op);

// The formula for `op`, or for its out-of-place form when `op` is an in-place
// `name_` without one; nullptr when there is none.
const Formula* find_formula(const OpEntry& op);
bool is_non_differentiable(const OpEntry& op);

// ---- helpers for formulas ----
// Sums `grad` over the dims broadcasting added or expanded, so it has `sizes`.
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);
// sum_to the input's shape, then cast to the input's dtype.
Tensor reduce_to(const Tensor& grad, const TensorMeta& input);
// Re-inserts reduced dims (size 1) so a keepdim=false result broadcasts
// against the input again; `dims` empty means "all dims".
Tensor unsqueeze_reduced(const Tensor& t, IntArrayRef input_sizes, IntArrayRef dims, bool keepdim);

// The gradient of `input` for the view `view = input.as_strided(...)`:
// scatters `grad` (shaped like the view) back through the storage, adding
// where the view's elements overlap. Geometries are absolute in the storage.
Tensor as_strided_backward(const Tensor& grad, const TensorMeta& input, IntArrayRef view_sizes,
                           IntArrayRef view_strides, int64_t view_offset);

// What the autograd kernel needs to know about an op, resolved once at load
// time so a call costs one lookup.
struct OpAutogradInfo {
  const Formula* formula = nullptr;
  bool non_differentiable = false;
  bool in_place = false;  // writes its first argument
  bool view = false;      // returns a view of its first argument
};
const OpAutogradInfo& op_autograd_info(const OpEntry& op);

// Resolves every op's OpAutogradInfo (an in-place op without a formula of
// its own takes its functional twin's); called by install_autograd(), after
// each formulas_*.cpp has registered its family (wiring/registrations.h).
void build_op_autograd_info();

}  // namespace ember::autograd
