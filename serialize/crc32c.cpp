// CRC-32C (crc32c.h). The CRC register starts at all ones and is inverted at
// the end; bits are processed least significant first (the "reflected"
// form), so the polynomial appears as 0x82F63B78.
#include "serialize/crc32c.h"

#include <array>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace ember::serialize {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;

// The CRC of each byte value on its own (register 0 in, no inversion).
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[b] = crc;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xFFFFFFFFu;
#if defined(__SSE4_2__)
  uint64_t wide = crc;
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // unaligned; the instruction reads the bytes in little-endian order
    wide = _mm_crc32_u64(wide, word);
  }
  crc = static_cast<uint32_t>(wide);
#endif
  for (; size > 0; ++p, --size) crc = kTable[(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint32_t crc32c_reference(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
  }
  return ~crc;
}

}  // namespace ember::serialize
