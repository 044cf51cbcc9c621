#include "distributed/store_ops.h"

#include <charconv>

#include "ember/error.h"

namespace ember::distributed {

int64_t apply_add(KeyValueMap& map, const std::string& key, int64_t amount) {
  int64_t value = 0;
  if (auto it = map.find(key); it != map.end()) {
    const auto* first = reinterpret_cast<const char*>(it->second.data());
    const auto* last = first + it->second.size();
    const auto [end, ec] = std::from_chars(first, last, value);
    EMBER_CHECK(ec == std::errc() && end == last && !it->second.empty(), "Store::add: the value at key '", key,
                "' is not a decimal integer (", it->second.size(), " bytes)");
  }
  EMBER_CHECK(!__builtin_add_overflow(value, amount, &value), "Store::add: key '", key, "' overflows int64 when adding ",
              amount);
  const std::string text = std::to_string(value);
  map[key] = Bytes(text.begin(), text.end());
  return value;
}

Bytes apply_compare_set(KeyValueMap& map, const std::string& key, const Bytes& expected, const Bytes& desired) {
  auto it = map.find(key);
  if (it == map.end()) {
    if (!expected.empty()) return expected;
    map[key] = desired;
    return desired;
  }
  if (it->second == expected) it->second = desired;
  return it->second;
}

void check_key(const std::string& key, const char* what) {
  EMBER_CHECK(!key.empty() && key.size() <= kMaxStoreKeyBytes, what, ": keys must have 1 to ", kMaxStoreKeyBytes,
              " bytes, got ", key.size());
}

void check_value(const Bytes& value, const char* what) {
  EMBER_CHECK(value.size() <= kMaxStoreValueBytes, what, ": values are at most ", kMaxStoreValueBytes,
              " bytes, got ", value.size());
}

}  // namespace ember::distributed
