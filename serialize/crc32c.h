// CRC-32C (Castagnoli; iSCSI, RFC 3720), the checksum of TFRecord files.
// Not the CRC-32 of crc32.h: another polynomial (0x1EDC6F41, reflected
// 0x82F63B78), so other values for the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember::serialize {

// The CRC-32C of `size` bytes: the SSE4.2 `crc32` instruction eight bytes at
// a time where the build targets it, a table one byte at a time elsewhere
// (and for the last few bytes).
uint32_t crc32c(const void* data, size_t size);
inline uint32_t crc32c(std::string_view s) { return crc32c(s.data(), s.size()); }

// The definition, one bit at a time: what crc32c() is tested against.
uint32_t crc32c_reference(const void* data, size_t size);

// TFRecord's "masked" CRC (rotated right by 15 bits plus a constant), so a
// CRC stored inside checksummed data does not checksum to a fixed value.
inline uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace ember::serialize
