// PyTorch's result_type: the dtype an op computes in when its inputs differ.
//
// Inputs fall into three priority classes: tensors with dims, 0-d tensors,
// and wrapped numbers (Scalars). A lower class changes the result only when
// it is of a higher category (bool < integer < floating): int32[3] + 2.5 is
// float32, int32[3] + 2 stays int32, float32[3] + float64 0-d stays float32.
#pragma once

#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

class ResultTypeState {
 public:
  void update(const Tensor& t) {
    const TensorImpl* impl = t.impl();
    if (impl->is_wrapped_number()) {
      wrapped_ = merge(wrapped_, wrapped_dtype(impl->dtype()));
    } else if (impl->dim() == 0) {
      zero_dim_ = merge(zero_dim_, impl->dtype());
    } else {
      dimmed_ = merge(dimmed_, impl->dtype());
    }
  }
  void update(const Scalar& s) { wrapped_ = merge(wrapped_, s.default_dtype()); }
  DType result() const;
  bool empty() const { return dimmed_ < 0 && zero_dim_ < 0 && wrapped_ < 0; }

 private:
  // -1 means "no input of this class yet".
  static int merge(int acc, DType t) {
    return acc < 0 ? static_cast<int>(t) : static_cast<int>(promote_types(static_cast<DType>(acc), t));
  }
  // A wrapped float takes the default dtype's place (float32): only its category matters.
  static DType wrapped_dtype(DType t) { return is_floating_point(t) ? DType::Float32 : t == DType::Bool ? t : DType::Int64; }
  int dimmed_ = -1;
  int zero_dim_ = -1;
  int wrapped_ = -1;
};

}  // namespace ember
