// nn::Module::state_dict and load_state_dict, with PyTorch's key names.
#include <set>
#include <sstream>

#include "ember/autograd.h"
#include "ember/nn/module.h"

namespace ember::nn {

TensorDict Module::state_dict() const {
  TensorDict out;
  for (const auto& [name, tensor] : named_parameters()) out.emplace(name, tensor.detach());
  for (const auto& [name, tensor] : named_buffers()) out.emplace(name, tensor.detach());
  return out;
}

namespace {
std::string join(const std::vector<std::string>& items) {
  std::ostringstream os;
  for (size_t i = 0; i < items.size(); ++i) os << (i ? ", " : "") << items[i];
  return os.str();
}
std::string quoted(const std::string& key) { return '"' + key + '"'; }
}  // namespace

void Module::load_state_dict(const TensorDict& state, bool strict) {
  // Everything is checked before anything is copied, so a failed load leaves
  // the module as it was.
  NamedTensors targets = named_parameters();
  for (auto& entry : named_buffers()) targets.push_back(std::move(entry));

  std::vector<std::string> missing, mismatched;
  std::set<std::string> known;
  for (const auto& [name, target] : targets) {
    known.insert(name);
    const auto it = state.find(name);
    if (it == state.end()) {
      missing.push_back(quoted(name));
      continue;
    }
    const Tensor& source = it->second;
    if (!source.defined() || source.sizes() != target.sizes()) {
      std::ostringstream os;
      os << quoted(name) << " (checkpoint " << (source.defined() ? source.sizes() : IntArrayRef()) << ", module "
         << target.sizes() << ")";
      mismatched.push_back(os.str());
    }
  }
  std::vector<std::string> unexpected;
  for (const auto& entry : state) {
    if (!known.count(entry.first)) unexpected.push_back(quoted(entry.first));
  }

  std::ostringstream problems;
  if (!mismatched.empty()) problems << "\n  size mismatch for " << join(mismatched);
  if (strict && !missing.empty()) problems << "\n  missing keys: " << join(missing);
  if (strict && !unexpected.empty()) problems << "\n  unexpected keys: " << join(unexpected);
  EMBER_CHECK(problems.str().empty(), name(), "::load_state_dict: the state does not fit the module:", problems.str());

  NoGradGuard no_grad;
  for (auto& [name, target] : targets) {
    const auto it = state.find(name);
    if (it != state.end()) target.copy_(it->second);  // converts dtype and device
  }
}

}  // namespace ember::nn
