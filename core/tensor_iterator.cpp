#include "core/tensor_iterator.h"

#include "core/dtype_dispatch.h"
#include "core/float_to_int.h"
#include "core/memory_overlap.h"
#include "core/op_decls.h"
#include "core/result_type.h"

namespace ember {
namespace {

// Writes the value of the 0-d CPU tensor `from` into the 0-d CPU tensor `to`,
// converted as copy_ converts (Note [Float to integer conversion]).
void convert_scalar(const Tensor& from, const Tensor& to) {
  const Scalar v = from.item();
  dispatch_dtype(to.dtype(), "convert_scalar", [&]<class T>() {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) *to.data_ptr<T>() = T(v.to<float>());
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      *to.data_ptr<T>() = v.is_floating_point() ? float_to_int<T>(v.to<double>()) : v.to<T>();
    else *to.data_ptr<T>() = v.to<T>();
  });
}

}  // namespace

TensorIterator TensorIterator::unary(std::string_view op, const Tensor& out, const Tensor& a) {
  Config c;
  c.name(op).output(out).input(a);
  return build(std::move(c));
}

TensorIterator TensorIterator::binary(std::string_view op, const Tensor& out, const Tensor& a, const Tensor& b) {
  Config c;
  c.name(op).output(out).input(a).input(b);
  return build(std::move(c));
}

TensorIterator TensorIterator::build(Config c) {
  TensorIterator it;
  const int nin = c.num_inputs;
  const int nout = c.num_outputs;
  it.num_outputs_ = nout;
  it.num_operands_ = nout + nin;
  EMBER_CHECK(it.num_operands_ <= kMaxOperands, c.op, ": too many operands");

  // Device: all tensors on one device, except 0-d CPU tensors (scalars).
  Device device = Device::cpu();
  bool have_device = false;
  for (int i = 0; i < nin; ++i) {
    const Tensor& t = c.inputs[i];
    EMBER_CHECK(t.defined(), c.op, ": input ", i, " is an undefined tensor");
    if (t.dim() == 0 && t.device().is_cpu()) continue;
    if (!have_device) {
      device = t.device();
      have_device = true;
    }
    EMBER_CHECK(t.device() == device, c.op, ": expected all tensors on one device, got ", device, " and ", t.device());
  }
  if (!have_device && nin > 0) device = c.inputs[0].device();

  // Memory overlap, on the operands as given (before broadcasting and dtype
  // conversion): an input broadcast from one element of the output still
  // overlaps it partially.
  if (c.check_mem_overlap) {
    for (int o = 0; o < nout; ++o) {
      const Tensor& out = c.outputs[o];
      if (!out.defined()) continue;
      assert_no_internal_overlap(out, c.op);
      for (int i = 0; i < nin; ++i)
        if (!c.inputs[i].is_same(out)) assert_no_partial_overlap(out, c.inputs[i], c.op);
    }
  }

  // Shape.
  DimVector shape;
  if (nin == 0) {
    EMBER_CHECK(c.outputs[0].defined(), c.op, ": an iterator with no inputs needs an output");
    shape = c.outputs[0].sizes();
    device = c.outputs[0].device();
  }
  for (int i = 0; i < nin; ++i) shape = broadcast_shapes(shape, c.inputs[i].sizes(), c.op);
  // A caller-given output (in-place ops, copy_) may be larger than the
  // inputs' broadcast: the inputs then broadcast to it.
  if (nin > 0 && c.outputs[0].defined() && c.outputs[0].sizes() != IntArrayRef(shape) &&
      broadcast_shapes(c.outputs[0].sizes(), shape, c.op) == DimVector(c.outputs[0].sizes())) {
    shape = c.outputs[0].sizes();
  }

  // Common dtype.
  DType common;
  if (c.common_dtype) {
    common = *c.common_dtype;
  } else {
    ResultTypeState state;
    for (int i = 0; i < nin; ++i) state.update(c.inputs[i]);
    common = state.result();
  }
  if (c.int_to_float && !is_floating_point(common)) common = DType::Float32;
  it.common_dtype_ = common;

  // Outputs.
  const DType out_dtype = c.output_dtype.value_or(common);
  for (int o = 0; o < nout; ++o) {
    Tensor& out = c.outputs[o];
    if (!out.defined()) {
      out = make_empty(shape, out_dtype, device);
      it.results_[o] = out;
      continue;
    }
    EMBER_CHECK(out.sizes() == IntArrayRef(shape), c.op, ": output with shape ", out.sizes(),
                " doesn't match the broadcast shape ", IntArrayRef(shape));
    EMBER_CHECK(out.device() == device, c.op, ": output is on ", out.device(), " but inputs are on ", device);
    EMBER_CHECK(can_cast(out_dtype, out.dtype()), c.op, ": result type ", out_dtype,
                " can't be cast to the desired output type ", out.dtype());
    it.results_[o] = out;
    if (out.dtype() != out_dtype) {
      // Compute into a temporary of the compute dtype, then copy back (finish()).
      it.needs_copy_back_[o] = true;
      out = make_empty(shape, out_dtype, device);
    }
  }

  // Operands: outputs first, then inputs (converted to the common dtype if
  // asked). Moved out of the Config, which is ours: each Tensor copy is two
  // atomic reference-count updates, a visible share of a 1-element op.
  for (int o = 0; o < nout; ++o) it.operands_[o] = std::move(c.outputs[o]);
  for (int i = 0; i < nin; ++i) {
    Tensor t = std::move(c.inputs[i]);
    if (c.promote_inputs && t.dtype() != common) {
      Tensor converted = make_empty(t.sizes(), common, t.device());
      if (t.dim() == 0 && t.device().is_cpu() && converted.device().is_cpu()) {
        convert_scalar(t, converted);  // a Scalar operand: no need for a dispatched copy
      } else {
        op::copy_.call(converted, t, false);
      }
      t = converted;
    }
    if (t.device() != device) t = t.to(device);  // a CPU scalar used with CUDA tensors
    it.operands_[nout + i] = std::move(t);
  }

  // Strides in bytes over `shape`, innermost first; broadcast dims get 0.
  const int nd = static_cast<int>(shape.size());
  it.numel_ = 1;
  for (int64_t s : shape) it.numel_ *= s;
  it.shape_.resize(nd);
  for (int d = 0; d < nd; ++d) it.shape_[d] = shape[nd - 1 - d];
  for (int op = 0; op < it.num_operands_; ++op) {
    const Tensor& t = it.operands_[op];
    const int64_t elem = static_cast<int64_t>(element_size(t.dtype()));
    const int offset = nd - static_cast<int>(t.dim());
    DimVector& st = it.strides_[op];
    st.resize(nd);
    for (int d = 0; d < nd; ++d) {
      const int td = nd - 1 - d - offset;  // the tensor's dim for iteration dim d
      st[d] = (td < 0 || t.sizes()[td] == 1) ? 0 : t.strides()[td] * elem;
    }
  }

  // Coalesce: drop size-1 dims, merge dims that are contiguous for every operand.
  int out_d = 0;
  for (int d = 0; d < nd; ++d) {
    if (it.shape_[d] == 1) continue;
    if (out_d > 0) {
      bool mergeable = true;
      for (int op = 0; op < it.num_operands_ && mergeable; ++op)
        mergeable = it.strides_[op][out_d - 1] * it.shape_[out_d - 1] == it.strides_[op][d];
      if (mergeable) {
        it.shape_[out_d - 1] *= it.shape_[d];
        continue;
      }
    }
    it.shape_[out_d] = it.shape_[d];
    for (int op = 0; op < it.num_operands_; ++op) it.strides_[op][out_d] = it.strides_[op][d];
    ++out_d;
  }
  if (out_d == 0) {  // a single element (0-d, or all dims of size 1)
    it.shape_.assign(1, 1);
    for (int op = 0; op < it.num_operands_; ++op) it.strides_[op].assign(1, 0);
    return it;
  }
  it.shape_.resize(out_d);
  for (int op = 0; op < it.num_operands_; ++op) it.strides_[op].resize(out_d);
  EMBER_CHECK(out_d <= 16, c.op, ": at most 16 non-mergeable dims are supported, got ", out_d);
  return it;
}

bool TensorIterator::is_contiguous() const {
  if (ndim() != 1) return false;
  for (int op = 0; op < num_operands_; ++op)
    if (strides_[op][0] != static_cast<int64_t>(element_size(operands_[op].dtype()))) return false;
  return true;
}

void TensorIterator::finish() {
  for (int o = 0; o < num_outputs_; ++o)
    if (needs_copy_back_[o]) op::copy_.call(results_[o], operands_[o], false);
}

}  // namespace ember
