// What an optimiser's step hands to a fused update op
// (core/op_decls_optim.h): the parameters of a group that have a gradient,
// as contiguous tensors, with their state.
#pragma once

#include <string>
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct ParamBatch {
  TensorList params;     // contiguous: the parameter, or a copy that write_back() stores into it
  TensorList grads;      // contiguous, the parameter's dtype
  TensorList originals;  // the group's parameters themselves
  std::vector<ParamState*> states;

  bool empty() const { return params.empty(); }
  // Buffer `name` of every parameter, created as zeros when missing.
  TensorList buffers(const std::string& name) const;
  // Each parameter's step count once this step is applied.
  std::vector<int64_t> next_steps() const;
  // After the update: stores the new step counts, and the updated copies of
  // non-contiguous parameters.
  void finish(bool count_step);
};

// state.buffers[name], created as zeros shaped like `param` when missing.
Tensor& state_buffer(ParamState& state, const std::string& name, const Tensor& param);

}  // namespace ember::optim
