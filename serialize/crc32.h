// CRC-32 (the IEEE polynomial of zlib, PNG and gzip), computed incrementally.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember::serialize {

class Crc32 {
 public:
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  uint32_t value() const { return value_; }

 private:
  uint32_t value_ = 0;  // the CRC of the bytes so far (0 for none)
};

}  // namespace ember::serialize
