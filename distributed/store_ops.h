// What add() and compare_set() do to a key-value map: the one definition the
// TCPStore server and the FileStore share. Counters are stored as decimal
// text, so get() on a counter reads "3".
#pragma once

#include <string>
#include <unordered_map>

#include "ember/distributed/store.h"

namespace ember::distributed {

using KeyValueMap = std::unordered_map<std::string, Bytes>;

// Adds `amount` to the counter at `key` (0 when missing); returns the sum.
// Raises an ember::Error when the value there is not a decimal integer.
int64_t apply_add(KeyValueMap& map, const std::string& key, int64_t amount);
Bytes apply_compare_set(KeyValueMap& map, const std::string& key, const Bytes& expected, const Bytes& desired);
void check_key(const std::string& key, const char* what);
void check_value(const Bytes& value, const char* what);

}  // namespace ember::distributed
