// CRC-32 through zlib's crc32_z, which works on several bytes at a time
// (several times faster than a byte-at-a-time table); zlib is already linked.
#include "serialize/crc32.h"

#include <zlib.h>

namespace ember::serialize {

void Crc32::update(const void* data, size_t size) {
  value_ = static_cast<uint32_t>(crc32_z(value_, static_cast<const Bytef*>(data), size));
}

}  // namespace ember::serialize
