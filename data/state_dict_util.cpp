// See state_dict_util.h.
#include "data/state_dict_util.h"

#include <cstring>

#include "ember/error.h"
#include "ember/ops.h"

namespace ember::data::detail {

Tensor u64_tensor(uint64_t value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return tensor({bits}, kInt64);
}

uint64_t read_u64(const TensorDict& state, const std::string& key, const char* owner) {
  auto it = state.find(key);
  EMBER_CHECK(it != state.end(), owner, "::load_state_dict: missing key '", key, "'");
  const Tensor& t = it->second;
  EMBER_CHECK(t.defined(), owner, "::load_state_dict: '", key, "' is an undefined tensor");
  EMBER_CHECK(t.dtype() == kInt64 && t.numel() == 1, owner, "::load_state_dict: '", key,
              "' must be a one-element int64 tensor, got ", t.dtype(), " of shape ", t.sizes());
  const int64_t bits = t.item<int64_t>();
  uint64_t value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

TensorDict sub_dict(const TensorDict& state, const std::string& prefix) {
  TensorDict out;
  for (const auto& [key, value] : state)
    if (key.compare(0, prefix.size(), prefix) == 0) out.emplace(key.substr(prefix.size()), value);
  return out;
}

}  // namespace ember::data::detail
