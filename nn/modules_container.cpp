// nn::Sequential, ModuleList, ModuleDict (modules/container.h).
#include "ember/nn/modules/container.h"

#include <sstream>

namespace ember::nn {

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& forward : forwards_) x = forward(x);
  return x;
}

const std::shared_ptr<Module>& SequentialImpl::operator[](size_t index) const {
  EMBER_CHECK(index < modules_.size(), "Sequential: index ", index, " is out of range for ", modules_.size(),
              " modules");
  return modules_[index];
}

const std::shared_ptr<Module>& ModuleListImpl::operator[](size_t index) const {
  EMBER_CHECK(index < modules_.size(), "ModuleList: index ", index, " is out of range for ", modules_.size(),
              " modules");
  return modules_[index];
}

bool ModuleDictImpl::contains(const std::string& key) const {
  for (const auto& item : items_) {
    if (item.first == key) return true;
  }
  return false;
}

std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items_) out.push_back(item.first);
  return out;
}

const std::shared_ptr<Module>& ModuleDictImpl::operator[](const std::string& key) const {
  for (const auto& item : items_) {
    if (item.first == key) return item.second;
  }
  std::ostringstream known;
  for (size_t i = 0; i < items_.size(); ++i) known << (i ? ", " : "") << "'" << items_[i].first << "'";
  EMBER_FAIL("ModuleDict: no module under key '", key, "' (keys: ", known.str(), ")");
}

}  // namespace ember::nn
