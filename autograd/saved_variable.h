// A tensor a backward node keeps, with the version it was saved at.
//
// Unpacking checks the version: if the tensor (or any view of its storage)
// was modified in place after it was saved, the gradient would be computed
// from the wrong values, so backward fails and names the node and the
// versions, as PyTorch does.
// A node's own result is kept as a data alias without autograd state (a node
// owning its output would be a reference cycle); unpacking re-attaches the
// node as its grad_fn, so a formula that uses it stays differentiable.
#pragma once

#include <memory>

#include "ember/autograd.h"
#include "ember/tensor.h"

namespace ember::autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  // `is_output`: t is a result of the node that saves it.
  SavedVariable(const Tensor& t, bool is_output);

  // `owner`: the node unpacking (re-attached to saved results).
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  bool defined() const { return data_.defined(); }
  // The tensor as saved, unchecked (for inspection).
  const Tensor& peek() const { return data_; }
  void reset() { data_ = Tensor(); }
  bool was_released() const { return released_; }
  void release() {
    data_ = Tensor();
    released_ = true;
  }

 private:
  Tensor data_;
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool released_ = false;
};

}  // namespace ember::autograd
