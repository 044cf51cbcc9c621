// The safetensors file format, at the level of bytes.
//
// Note [safetensors layout]
//   bytes 0..8      N, the header length, unsigned 64-bit little-endian
//   bytes 8..8+N    the header: UTF-8 JSON object, starting with '{', maybe
//                   padded at the end with spaces (0x20) so the data starts
//                   at a multiple of 8
//   bytes 8+N..     the data section: each tensor's bytes, row-major,
//                   little-endian, back to back
// The header maps each tensor name to
//   {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}
// with offsets relative to the start of the data section, and may hold one
// "__metadata__" object mapping strings to strings.
//
// Note [untrusted files]
// parse_safetensors treats its input as hostile: every number in the header
// is checked before it is used, so no input makes it read out of bounds, and
// every problem is an ember::Error that names the file, the tensor and what
// was expected. Beyond what the reference reader checks, it also rejects
// duplicate JSON keys, keys other than dtype/shape/data_offsets in a tensor
// entry, and a header that does not start with '{' (the spec's MUST).
//
// Note [writer order]
// write_safetensors lays tensors out as the reference writer (the Rust
// `safetensors` crate behind Python's safetensors.torch.save) does: by dtype
// in the crate's order, widest first (I64, F64, F32, I32, BF16, F16, U8,
// BOOL), then by name; header keys appear in that same order, compact JSON,
// padded with spaces to a multiple of 8. The reference writes metadata keys
// in hash-map (random) order; we write them sorted, so files with at most
// one metadata key are byte-identical to the reference's. An empty metadata
// map writes no "__metadata__" key (as the reference does for metadata=None).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ember/dtype.h"

namespace ember::serialize {

// One tensor of a parsed header. Offsets are into the data section.
struct TensorRecord {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  size_t offset_begin, offset_end;
};

struct SafetensorsHeader {
  std::vector<TensorRecord> tensors;  // in data order (sorted by offset_begin)
  std::map<std::string, std::string> metadata;
  size_t data_start;  // byte offset of the data section in the file
};

// The largest header accepted (the reference reader's limit too).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// Parses and validates the header of a buffer holding a whole file. On
// success every record satisfies data_start + offset_end <= size and
// offset_end - offset_begin == numel * element size, and the records cover
// the data section exactly. `what` names the file in error messages.
SafetensorsHeader parse_safetensors(const uint8_t* bytes, size_t size, std::string_view what);

// A tensor to write: `data` points to `nbytes` bytes, row-major,
// little-endian (may be null when nbytes is 0).
struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
  size_t nbytes;
};

// Serialises to the bytes of a whole file (see Note [writer order]).
std::vector<uint8_t> write_safetensors(const std::vector<TensorView>& tensors,
                                       const std::map<std::string, std::string>& metadata);

// The safetensors dtype name ("F32", "BF16", "BOOL", ...) of an ember dtype.
std::string_view safetensors_dtype_name(DType dtype);

// Reads a whole file; a clear error if it is missing or unreadable.
std::vector<uint8_t> read_file_bytes(const std::string& path);

// Writes a file so that readers see the old or the new content, never a
// mix: writes a temporary file in the same directory, fsyncs it, renames it
// over `path`, then fsyncs the directory.
void write_file_atomic(const std::string& path, const uint8_t* data, size_t size);

}  // namespace ember::serialize
