// Reading a file front to back, raw or through zlib's inflate, for the
// readers of untrusted data files (IDX). Errors name the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::data::detail {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to n bytes into dst; fewer only at the end of the stream.
  virtual size_t read(void* dst, size_t n) = 0;
  // The most bytes the stream can still yield (exact for a raw file; for a
  // gzip stream, the bound set by deflate's largest compression ratio).
  virtual uint64_t max_remaining() const = 0;
};

// A stream over the file at `path`: inflated when it starts with the gzip
// magic (1f 8b), raw otherwise. `owner` prefixes error messages ("load_idx").
std::unique_ptr<ByteStream> open_byte_stream(const std::string& path, const char* owner);

}  // namespace ember::data::detail
