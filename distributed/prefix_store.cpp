#include "ember/distributed/store.h"

namespace ember::distributed {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> base)
    : Store(base->timeout()), prefix_(std::move(prefix) + "/"), base_(std::move(base)) {}

std::vector<std::string> PrefixStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const std::string& k : keys) out.push_back(prefix_ + k);
  return out;
}

void PrefixStore::set(const std::string& key, const Bytes& value) { base_->set(prefix_ + key, value); }
Bytes PrefixStore::get(const std::string& key) { return base_->get(prefix_ + key); }
int64_t PrefixStore::add(const std::string& key, int64_t amount) { return base_->add(prefix_ + key, amount); }
Bytes PrefixStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return base_->compare_set(prefix_ + key, expected, desired);
}
void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  base_->wait(prefixed(keys), timeout);
}
bool PrefixStore::check(const std::vector<std::string>& keys) { return base_->check(prefixed(keys)); }
bool PrefixStore::delete_key(const std::string& key) { return base_->delete_key(prefix_ + key); }

}  // namespace ember::distributed
