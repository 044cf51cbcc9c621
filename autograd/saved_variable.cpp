#include "autograd/saved_variable.h"

#include <sstream>

#include "autograd/autograd_meta.h"
#include "ember/error.h"

namespace ember::autograd {

SavedVariable::SavedVariable(const Tensor& t, bool is_output) : is_output_(is_output) {
  if (!t.defined()) return;
  version_ = t._version();
  if (is_output) {
    output_nr_ = t.output_nr();
    data_ = data_alias(t);
  } else {
    data_ = t;
  }
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  if (!data_.defined()) {
    EMBER_CHECK(!released_, "backward through ", owner ? owner->name() : std::string("a node"),
                " a second time: its saved tensors were freed after the first backward "
                "(call backward with retain_graph=true the first time)");
    return Tensor();
  }
  const uint32_t now = data_._version();
  if (now != version_) {
    std::ostringstream os;
    os << "one of the tensors needed for gradient computation was modified by an in-place operation: [" << data_.dtype()
       << " " << data_.sizes() << "] saved by " << (owner ? owner->name() : std::string("a node"));
    if (owner && !owner->forward_description().empty()) os << " (forward op " << owner->forward_description() << ")";
    os << " is at version " << now << "; expected version " << version_ << " instead";
    EMBER_FAIL(os.str());
  }
  if (!is_output_) return data_;
  // A node's own result: give it the node back as history, so a formula using
  // it under create_graph stays differentiable.
  Tensor out = data_alias(data_);
  if (owner && is_floating_point(out.dtype())) set_history(out, owner, output_nr_);
  return out;
}

}  // namespace ember::autograd
