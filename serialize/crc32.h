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
  uint32_t value() const { return ~state_; }

 private:
  uint32_t state_ = 0xFFFFFFFFu;
};

}  // namespace ember::serialize
