// TFRecord files: the record framing TensorBoard's event files use.
//
// Note [TFRecord framing]
// A TFRecord file is records one after another, with no file header. Each is
//   uint64  length of the data, little-endian
//   uint32  masked CRC-32C of those 8 length bytes
//   bytes   the data (for an event file: one serialized Event proto)
//   uint32  masked CRC-32C of the data
// (mask_crc32c in crc32c.h). The length's own checksum lets a reader reject
// a corrupt length before it trusts it to size a read.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace ember::serialize {

// One record's bytes, framed: header, data, footer.
std::string frame_tfrecord(std::string_view data);

// Appends records to a file, created (or truncated) when the writer opens.
class TFRecordWriter {
 public:
  explicit TFRecordWriter(std::string path);
  ~TFRecordWriter();
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  void write(std::string_view data);
  // Hands what was written to the OS, so a reader sees whole records.
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

// Every record's data, in order. A short file, a length past the end or a
// checksum that does not match is an ember::Error naming the file and the
// record's byte offset.
std::vector<std::string> read_tfrecords(const std::string& path);

}  // namespace ember::serialize
