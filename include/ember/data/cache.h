// A dataset cache: decode a data set once into a binary file, then map that
// file into memory and serve tensors straight from the mapping.
//
//   CachedTensors c = open_dataset_cache("/tmp/fmnist.cache", file_fingerprint({img, lbl}), [&] {
//     return TensorDict{{"images", load_idx(img)}, {"labels", load_idx(lbl)}};   // runs only when needed
//   });
//   auto ds = std::make_shared<TensorDataset>(c.tensors.at("images"), c.tensors.at("labels"));
//
// Note [dataset cache format]
//   bytes 0..8   magic "EMBERDSC"
//   8..12        format version (uint32 little-endian, now 1)
//   12..16       header length H in bytes, from offset 0 to the end of the checksum
//   then         source id: uint32 length + bytes (what the cache was made from)
//                tensor count: uint32
//                per tensor: uint32 name length + name, uint8 dtype, uint8 D,
//                D int64 dims, uint64 data offset (from the file start, a
//                multiple of 64), uint64 byte count
//   H-8..H       FNV-1a 64 checksum of bytes 0..H-8
//   then         the tensors' bytes, each contiguous, row-major, at its offset
// Every field is validated against the file size before use; the data bytes
// themselves are not checksummed (that would read the whole file on open).
//
// The tensors share one private (copy-on-write) mapping of the file, kept
// alive by the tensors that view it: writing to such a tensor changes the
// process's copy only, never the file. The cache is written atomically
// (temporary file, fsync, rename), so a reader sees a whole cache or none.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ember/serialize.h"

namespace ember::data {

// Writes `tensors` (any device and layout) as a cache made from `source_id`.
void write_dataset_cache(const std::string& path, const TensorDict& tensors, const std::string& source_id);

// Maps a cache. Throws an ember::Error naming the file and the problem when
// it is missing, malformed or truncated, or (when `source_id` is not empty)
// was made from another source.
TensorDict read_dataset_cache(const std::string& path, const std::string& source_id = "");

struct CachedTensors {
  TensorDict tensors;
  // True when `decode` ran (no usable cache), with the reason in `rebuild_reason`.
  bool rebuilt = false;
  std::string rebuild_reason;
};

// Maps the cache at `path` when it is valid and was made from `source_id`;
// otherwise (missing, stale, corrupt) calls `decode`, writes its tensors as
// the new cache and maps that.
CachedTensors open_dataset_cache(const std::string& path, const std::string& source_id,
                                 const std::function<TensorDict()>& decode);

// An id for a set of source files: each path with its size and modification
// time, so a cache made from them goes stale when one changes.
std::string file_fingerprint(const std::vector<std::string>& paths);

}  // namespace ember::data
